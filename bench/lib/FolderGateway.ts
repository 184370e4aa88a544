/**
 * `npm start -- <folder>`'s gateway as a user starts it: `node --import tsx
 * apps/gateway/src/main.ts --port 0 <folder>` in its own process group (what scripts/start.mjs
 * spawns), with a data folder of the benchmark's choosing. It is timed from spawn to the two
 * things it prints: the `"folder opened"` log line (with main.ts's own `ms` for FolderSync.start)
 * and the owner link. bench/lib/folderGatewayProbe.ts, preloaded, answers for its memory after a
 * full GC over IPC; /proc gives its CPU time and peak RSS without asking it anything.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const probe = join(repoRoot, 'bench', 'lib', 'folderGatewayProbe.ts');
/** Epoch ms with sub-millisecond precision, comparable with a page's `performance.timeOrigin + now()`. */
export const epochNow = () => performance.timeOrigin + performance.now();
const live = new Set<FolderGateway>();
process.once('exit', () => {
  for (const gateway of live) gateway.kill();
});

export interface FolderGatewayOptions {
  folder: string;
  dataDir: string;
  /** The built IDE it serves (FLINT_WEB_ROOT). */
  webRoot: string;
  /** Spawn → owner link printed, at most (a 5,000-file open on a busy machine takes a while). */
  readyTimeoutMs?: number;
  /** The checkout whose main.ts runs (default: this one; `BENCH_VARIANT_ROOT` for the code before a change). */
  root?: string;
}

export interface GatewayStats {
  memory: NodeJS.MemoryUsage;
  cpu: { user: number; system: number };
}

export class FolderGateway {
  private readonly stderrTail: string[] = [];
  private exitCode: number | null | undefined = undefined;
  /** Epoch ms of the `"folder opened"` line, and main.ts's own figures in it. */
  openedAt = Number.NaN;
  folderOpenedMs = Number.NaN;
  files = Number.NaN;
  /** Epoch ms the owner link was printed: the gateway is ready for a browser. */
  readyAt = Number.NaN;
  ownerUrl = '';
  private nextId = 1;
  private readonly pending = new Map<number, (value: unknown) => void>();

  private constructor(
    private readonly child: ChildProcess,
    readonly spawnedAt: number,
  ) {}

  static async start(options: FolderGatewayOptions): Promise<FolderGateway> {
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      FLINT_DATA_DIR: options.dataDir,
      FLINT_WEB_ROOT: options.webRoot,
      ...(process.env.BENCH_CPU_PROF === '1' && { BENCH_CPU_PROF: '1' }),
    };
    const spawnedAt = epochNow();
    const root = options.root ?? repoRoot;
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', '--import', probe, join(root, 'apps', 'gateway', 'src', 'main.ts'), '--port', '0', options.folder], {
      cwd: root,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    const gateway = new FolderGateway(child, spawnedAt);
    live.add(gateway);
    child.on('message', (reply: { id: number; value: unknown }) => {
      gateway.pending.get(reply.id)?.(reply.value);
      gateway.pending.delete(reply.id);
    });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      gateway.stderrTail.push(chunk);
      if (gateway.stderrTail.length > 20) gateway.stderrTail.shift();
    });
    const ready = new Promise<void>((resolve, reject) => {
      let buffered = '';
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        const at = epochNow();
        buffered += chunk;
        const lines = buffered.split('\n');
        buffered = lines.pop()!;
        for (const line of lines) {
          if (line.includes('"folder opened"')) {
            const logged = JSON.parse(line) as { ms: number; files: number };
            gateway.openedAt = at;
            gateway.folderOpenedMs = logged.ms;
            gateway.files = logged.files;
          }
          const link = /\(owner link\): (\S+)/.exec(line);
          if (link) {
            gateway.readyAt = at;
            gateway.ownerUrl = link[1]!;
            resolve();
          }
        }
      });
      child.once('exit', (code, signal) => {
        gateway.exitCode = code;
        reject(new Error(`the gateway exited (${signal ?? code}) before printing its owner link: ${gateway.stderrTail.join('').slice(-2000)}`));
      });
      const timeoutMs = options.readyTimeoutMs ?? 300_000;
      setTimeout(() => reject(new Error(`the gateway printed no owner link within ${timeoutMs / 1000} s`)), timeoutMs).unref();
    });
    try {
      await ready;
    } catch (error) {
      gateway.kill();
      throw error;
    }
    return gateway;
  }

  get pid(): number {
    return this.child.pid!;
  }

  get origin(): string {
    return new URL(this.ownerUrl).origin;
  }

  /** User + system CPU seconds the process has used so far (/proc/<pid>/stat; NaN elsewhere). */
  cpuSeconds(): number {
    try {
      const fields = readFileSync(`/proc/${this.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      // utime and stime are fields 14 and 15 of stat, 12 and 13 after "pid (comm) ", in clock ticks (100 Hz on Linux).
      return (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      return Number.NaN;
    }
  }

  /** The most resident memory the process has had (VmHWM, bytes; NaN where /proc is missing). */
  peakRssBytes(): number {
    try {
      const match = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${this.pid}/status`, 'utf8'));
      return match ? Number(match[1]) * 1024 : Number.NaN;
    } catch {
      return Number.NaN;
    }
  }

  /** Memory after a full GC, and CPU, as the process reports them (bench/lib/folderGatewayProbe.ts). */
  stats(): Promise<GatewayStats> {
    return this.call('stats') as Promise<GatewayStats>;
  }

  /** With BENCH_CPU_PROF=1: ends the profile begun before main.ts loaded and writes it to `path`. */
  profileStop(path: string): Promise<unknown> {
    return this.call('profileStop', { path });
  }

  /** A series of the gateway's /metrics (flint_docs_loaded…), summed over its labels (flint_session_closes_total). */
  async metric(name: string): Promise<number> {
    const text = await (await fetch(`${this.origin}/metrics`)).text();
    let total = 0;
    for (const match of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))) total += Number(match[1]);
    return total;
  }

  private call(op: string, args: Record<string, unknown> = {}): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (this.exitCode !== undefined) return reject(new Error('the gateway has exited'));
      this.pending.set(id, resolve);
      this.child.send({ id, op, ...args });
      setTimeout(() => reject(new Error(`the gateway did not answer "${op}" within 60 s`)), 60_000).unref();
    });
  }

  /** As Ctrl-C would: SIGTERM (main.ts writes what is pending and closes its store), then the group is killed. */
  async stop(): Promise<void> {
    if (this.exitCode === undefined) {
      const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.kill(), 15_000);
      await exited;
      clearTimeout(timer);
    }
    this.kill();
  }

  kill(): void {
    live.delete(this);
    try {
      process.kill(-this.child.pid!, 'SIGKILL');
    } catch {
      // The group is already gone.
    }
  }
}
