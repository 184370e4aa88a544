/**
 * A server under test in its own process: the gateway, the raw relay, the fake provider, the
 * reference Yjs server. A separate process keeps each one's CPU time (process.cpuUsage) and
 * memory its own, and keeps the load generator off its event loop. Children run in their own
 * process group and are killed by group, never by name.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const benchDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const childMain = join(benchDir, 'servers', 'childMain.ts');
const live = new Set<ChildHost>();
const deathListeners = new Set<(error: Error) => void>();

export interface ProcessStats {
  /** process.cpuUsage() of the child, microseconds. */
  cpu: { user: number; system: number };
  memory: NodeJS.MemoryUsage;
  /** Event-loop delay since the last reset (ms; monitorEventLoopDelay, 5 ms resolution). */
  eventLoopDelayMs: { p50: number; p99: number; max: number };
}

interface Reply {
  id: number;
  ok: boolean;
  value?: unknown;
  error?: string;
}

export class ChildHost {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private exited = false;
  private stopping = false;

  private constructor(
    readonly kind: string,
    private readonly child: ChildProcess,
    /** What the child reported once it listened (its URL, port). */
    readonly info: Record<string, unknown>,
  ) {}

  /**
   * Starts `bench/servers/childMain.ts <kind>` with `options` and resolves once it listens.
   * `root`: another checkout of this repository (a git worktree with its own node_modules or
   * links to these), whose childMain and sources the child runs instead: the code before a
   * change, as one more arm of the same run (`BENCH_VARIANT_ROOT`, see bench/README.md).
   */
  static async start(kind: string, options: Record<string, unknown> = {}, root?: string): Promise<ChildHost> {
    const execArgv = ['--import', 'tsx', '--expose-gc'];
    const main = root ? join(root, 'bench', 'servers', 'childMain.ts') : childMain;
    const child = fork(main, [kind, JSON.stringify(options)], {
      execArgv,
      cwd: root,
      detached: true,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: { ...process.env, NODE_ENV: 'production' },
    });
    const info = await new Promise<Record<string, unknown>>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`${kind} child exited (${code}) before it was ready`));
      child.once('exit', onExit);
      child.once('message', (message: { ready?: Record<string, unknown>; error?: string }) => {
        child.off('exit', onExit);
        if (message.ready) resolve(message.ready);
        else reject(new Error(`${kind} child failed to start: ${message.error ?? 'no reason'}`));
      });
    });
    const host = new ChildHost(kind, child, info);
    live.add(host);
    child.on('message', (reply: Reply) => host.settle(reply));
    child.once('exit', (code, signal) => {
      host.exited = true;
      if (!host.stopping) {
        const error = new Error(`${kind} child died unexpectedly (${signal ?? `exit ${code}`}); its stderr is above`);
        for (const listener of deathListeners) listener(error);
      }
      live.delete(host);
      for (const waiter of host.pending.values()) waiter.reject(new Error(`${kind} child exited mid-call`));
      host.pending.clear();
    });
    return host;
  }

  get pid(): number {
    return this.child.pid!;
  }

  get url(): string {
    return String(this.info.url);
  }

  /** Calls an operation the child registered (see childMain.ts). */
  call<T = unknown>(op: string, args: unknown = {}): Promise<T> {
    if (this.exited) return Promise.reject(new Error(`${this.kind} child has exited`));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.child.send({ id, op, args });
    });
  }

  /** CPU time and memory of the child; `gc` runs a full collection first (for footprints). */
  stats(gc = false, resetLoopDelay = false): Promise<ProcessStats> {
    return this.call<ProcessStats>('stats', { gc, resetLoopDelay });
  }

  /**
   * With BENCH_CPU_PROF=1, profiles the child's CPU until the returned function is called, which
   * writes bench/results/profiles/<label>.cpuprofile (read it with `npx tsx bench/profile.ts`).
   * Without it, does nothing: profiling slows what it measures.
   */
  async profile(label: string): Promise<() => Promise<void>> {
    if (process.env.BENCH_CPU_PROF !== '1') return async () => {};
    const dir = join(benchDir, 'results', 'profiles');
    mkdirSync(dir, { recursive: true });
    await this.call('profileStart');
    return async () => {
      const path = await this.call<string>('profileStop', { path: join(dir, `${label}.cpuprofile`) });
      console.log(`  CPU profile of ${this.kind}: ${path}`);
    };
  }

  /** Asks the child to exit (so a CPU profile is written), then kills its process group. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.send({ id: 0, op: 'exit', args: {} }, () => undefined);
    const timer = setTimeout(() => this.kill(), 3_000);
    await exited;
    clearTimeout(timer);
    this.kill();
  }

  kill(): void {
    this.stopping = true;
    try {
      process.kill(-this.child.pid!, 'SIGKILL');
    } catch {
      // The group is already gone: nothing to kill.
    }
  }

  private settle(reply: Reply): void {
    const waiter = this.pending.get(reply.id);
    if (!waiter) return;
    this.pending.delete(reply.id);
    if (reply.ok) waiter.resolve(reply.value);
    else waiter.reject(new Error(`${this.kind}: ${reply.error ?? 'failed'}`));
  }

  /** Rejects when any child dies without being stopped: a benchmark then fails fast instead of hanging. */
  static unexpectedExit(): { promise: Promise<never>; dispose: () => void } {
    let listener!: (error: Error) => void;
    const promise = new Promise<never>((_, reject) => {
      listener = reject;
      deathListeners.add(listener);
    });
    promise.catch(() => undefined);
    return { promise, dispose: () => deathListeners.delete(listener) };
  }

  /** Stops every child still running (after a benchmark, crashed or not). */
  static async stopAll(): Promise<void> {
    await Promise.all([...live].map((host) => host.stop()));
  }

  static killAll(): void {
    for (const host of live) host.kill();
  }
}

process.once('exit', () => ChildHost.killAll());
