/**
 * What B13 runs besides ChildHost's children: one redis-server and one PostgreSQL (the
 * test-kit's, on loopback with temporary data folders), clusters of real gateway processes
 * (main.ts with FLINT_DATABASE_URL and FLINT_REDIS_URL, as an operator runs them; each cluster
 * with a database and a Redis prefix of its own) and Hocuspocus servers on the same Redis. The
 * lone gateway on SQLite that B13 compares them with is a ChildHost child, as in B2 and B6. Every
 * process runs in its own process group and is killed by group: by `stop()`, or, if the runner
 * exits without it (a hung benchmark, Ctrl-C), by the exit hook below.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDatabase, startPostgres, startRedis, type RunningService } from '@flint/test-kit';
import { GatewayProcesses, type GatewayProcess } from '@flint/gateway/testing';

const hocuspocusMain = join(dirname(fileURLToPath(import.meta.url)), '..', 'servers', 'hocuspocusRedisServer.ts');

/** Process groups still running, killed if the runner exits before stop(). */
const liveGroups = new Set<number>();
process.once('exit', () => {
  for (const pgid of liveGroups) killGroup(pgid);
});

function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // The group is already gone: nothing to kill.
  }
}

export interface HocuspocusChild {
  /** ws://127.0.0.1:port */
  url: string;
  pid: number;
}

export class ClusterHarness {
  private readonly clusters: GatewayProcesses[] = [];
  private readonly hocuspocusChildren: ChildProcess[] = [];
  private readonly gatewayPids: number[] = [];
  private stopping = false;
  private fail: (error: Error) => void = () => {};
  private databases = 0;
  /** Rejects when a gateway or Hocuspocus server dies before stop(): the benchmark fails fast instead of hanging. */
  readonly died: Promise<never>;

  private constructor(
    readonly redis: RunningService,
    readonly postgres: RunningService,
  ) {
    this.died = new Promise<never>((_, reject) => (this.fail = reject));
    this.died.catch(() => undefined);
    liveGroups.add(redis.pid);
    liveGroups.add(postgres.pid);
  }

  static async start(): Promise<ClusterHarness> {
    const [redis, postgres] = await Promise.allSettled([startRedis(), startPostgres()]);
    if (redis.status === 'fulfilled' && postgres.status === 'fulfilled') return new ClusterHarness(redis.value, postgres.value);
    await Promise.all([redis, postgres].map((s) => (s.status === 'fulfilled' ? s.value.stop() : undefined)));
    throw [redis, postgres].map((s) => (s.status === 'rejected' ? s.reason : null)).find(Boolean);
  }

  /** A fresh database in the shared PostgreSQL (a URL for FLINT_DATABASE_URL or a `pg` client). */
  database(name: string): string {
    return createDatabase(this.postgres, `${name}${this.databases++}`);
  }

  /** `size` gateways sharing a fresh database and a Redis prefix of their own; `env` adds the provider. */
  async cluster(name: string, size: number, env: Record<string, string>): Promise<GatewayProcess[]> {
    const cluster = new GatewayProcesses({ FLINT_DATABASE_URL: this.database(name), FLINT_REDIS_URL: this.redis.url, FLINT_REDIS_PREFIX: `${name}:`, ...env });
    this.clusters.push(cluster);
    const gateways = await Promise.all(Array.from({ length: size }, () => cluster.start()));
    for (const gateway of gateways) {
      liveGroups.add(gateway.child.pid!);
      this.gatewayPids.push(gateway.child.pid!);
      gateway.child.once('exit', (code, signal) => {
        if (this.stopping) return;
        const tail = gateway.output().split('\n').slice(-20).join('\n');
        this.fail(new Error(`gateway ${gateway.id} of cluster ${name} died (${signal ?? `exit ${code}`}); its last output:\n${tail}`));
      });
    }
    return gateways;
  }

  /** A Hocuspocus server with the Redis extension on the shared redis-server, under `prefix`. */
  async hocuspocus(prefix: string): Promise<HocuspocusChild> {
    const child = fork(hocuspocusMain, [this.redis.url, prefix], {
      execArgv: ['--import', 'tsx'],
      detached: true,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: { ...process.env, NODE_ENV: 'production' },
    });
    liveGroups.add(child.pid!);
    this.hocuspocusChildren.push(child);
    const ready = await new Promise<{ url: string }>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`Hocuspocus server exited (${code}) before it was ready`));
      child.once('exit', onExit);
      child.once('message', (message: { ready?: { url: string }; error?: string }) => {
        child.off('exit', onExit);
        if (message.ready) resolve(message.ready);
        else reject(new Error(`Hocuspocus server failed to start: ${message.error ?? 'no reason'}`));
      });
    });
    child.once('exit', (code, signal) => {
      if (!this.stopping) this.fail(new Error(`Hocuspocus server died (${signal ?? `exit ${code}`}); its stderr is above`));
    });
    return { url: ready.url, pid: child.pid! };
  }

  /** Kills every gateway and Hocuspocus server by process group, then stops Redis and PostgreSQL. */
  async stop(): Promise<void> {
    this.stopping = true;
    const exited = this.hocuspocusChildren.map((child) =>
      child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise<void>((resolve) => child.once('exit', () => resolve())),
    );
    for (const child of this.hocuspocusChildren) killGroup(child.pid!);
    await Promise.all([...exited, ...this.clusters.map((cluster) => cluster.stopAll())]);
    for (const pid of [...this.hocuspocusChildren.map((child) => child.pid!), ...this.gatewayPids]) liveGroups.delete(pid);
    await Promise.all([this.redis.stop(), this.postgres.stop()]);
    liveGroups.delete(this.redis.pid);
    liveGroups.delete(this.postgres.pid);
  }
}
