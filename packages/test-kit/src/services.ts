import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Real Redis and PostgreSQL servers for tests and benchmarks, from Debian's packages, each on a
 * loopback port with a temporary data directory (no Docker, nothing shared with the machine's
 * own services). Each runs in its own process group and is killed with it.
 */
export interface RunningService {
  /** redis://127.0.0.1:port or postgres://flint@127.0.0.1:port/flint */
  readonly url: string;
  readonly port: number;
  /** The server's process id, also its process group's (a benchmark reads its CPU time in /proc). */
  readonly pid: number;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function untilListening(port: number, child: ChildProcess, name: string, timeoutMs = 30_000): Promise<void> {
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with code ${child.exitCode} before listening`);
    const ok = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: '127.0.0.1', port });
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() - started > timeoutMs) throw new Error(`${name} did not listen on ${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  killGroup(child, signal);
  const timer = setTimeout(() => killGroup(child, 'SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

export function hasRedis(): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
}

/** A redis-server with no persistence on a free loopback port (or `port`: a restart on the same one). */
export async function startRedis(options: { port?: number } = {}): Promise<RunningService> {
  const port = options.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), 'flint-redis-'));
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--protected-mode', 'no'],
    { detached: true, stdio: 'ignore' },
  );
  await untilListening(port, child, 'redis-server');
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pid: child.pid!,
    stop: async () => {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Debian installs PostgreSQL's programs under /usr/lib/postgresql/<major>/bin. */
function postgresBin(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const majors = readdirSync(root).filter((name) => /^\d+$/.test(name)).sort((a, b) => Number(b) - Number(a));
  for (const major of majors) {
    const bin = join(root, major, 'bin');
    if (existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'postgres'))) return bin;
  }
  return null;
}

export function hasPostgres(): boolean {
  return postgresBin() !== null;
}

/**
 * PostgreSQL refuses to run as root: as root, its programs run as Debian's `postgres` user
 * (created by the package), in a data directory that user owns.
 */
function asPostgresUser(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const id = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (id.status !== 0 || gid.status !== 0) throw new Error('running as root, and there is no `postgres` user to run PostgreSQL as');
  return { uid: Number(id.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/**
 * A PostgreSQL cluster made for this run: `initdb` into a temporary directory, then `postgres`
 * on a free loopback port with fsync off (test data only). The database `flint` belongs to the
 * user `flint`, trusted on loopback.
 */
export async function startPostgres(): Promise<RunningService> {
  const bin = postgresBin();
  if (!bin) throw new Error('PostgreSQL is not installed (apt-get install postgresql)');
  const user = asPostgresUser();
  const dir = mkdtempSync(join(tmpdir(), 'flint-pg-'));
  const data = join(dir, 'data');
  if (user) {
    chownSync(dir, user.uid, user.gid);
    chmodSync(dir, 0o700);
  }
  const init = spawnSync(join(bin, 'initdb'), ['-D', data, '-U', 'flint', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale=C'], {
    encoding: 'utf8',
    ...(user ?? {}),
  });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.stdout}`);
  const port = await freePort();
  const child = spawn(
    join(bin, 'postgres'),
    ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'full_page_writes=off', '-c', 'max_connections=200'],
    { detached: true, stdio: 'ignore', ...(user ?? {}) },
  );
  await untilListening(port, child, 'postgres');
  // Listening comes before accepting: "the database system is starting up" for a moment.
  let create = spawnSync(join(bin, 'createdb'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'flint', 'flint'], { encoding: 'utf8' });
  for (let tries = 0; create.status !== 0 && /starting up/.test(create.stderr) && tries < 300; tries++) {
    await new Promise((r) => setTimeout(r, 100));
    create = spawnSync(join(bin, 'createdb'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'flint', 'flint'], { encoding: 'utf8' });
  }
  if (create.status !== 0) {
    await stopChild(child);
    throw new Error(`createdb failed: ${create.stderr}`);
  }
  return {
    url: `postgres://flint@127.0.0.1:${port}/flint`,
    port,
    pid: child.pid!,
    stop: async () => {
      await stopChild(child, 'SIGINT'); // fast shutdown
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A fresh database in a running PostgreSQL, for one test's isolation. */
export function createDatabase(service: RunningService, name: string): string {
  const bin = postgresBin();
  if (!bin) throw new Error('PostgreSQL is not installed');
  const result = spawnSync(join(bin, 'createdb'), ['-h', '127.0.0.1', '-p', String(service.port), '-U', 'flint', name], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`createdb ${name} failed: ${result.stderr}`);
  return service.url.replace(/\/flint$/, `/${name}`);
}
