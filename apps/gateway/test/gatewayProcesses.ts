import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@flint/test-kit';

const mainTs = join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'main.ts');

export interface GatewayProcess {
  readonly id: string;
  readonly port: number;
  readonly url: string;
  readonly child: ChildProcess;
  /** Everything it printed, for a failing test's message. */
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Real gateway processes (main.ts under tsx) for the cluster's tests and benchmarks: each in
 * its own process group and data folder, on a free loopback port, with whatever environment the
 * caller adds (FLINT_DATABASE_URL, FLINT_REDIS_URL, a provider).
 */
export class GatewayProcesses {
  private readonly all: GatewayProcess[] = [];
  private readonly dataRoot = mkdtempSync(join(tmpdir(), 'flint-cluster-'));

  constructor(private readonly env: Record<string, string>) {}

  async start(extraEnv: Record<string, string> = {}): Promise<GatewayProcess> {
    const port = await freePort();
    const dataDir = mkdtempSync(join(this.dataRoot, 'gw-'));
    const child = spawn(process.execPath, ['--import', 'tsx', mainTs], {
      // No web app unless the caller names one (FLINT_WEB_ROOT): most tests speak the protocol only.
      env: { ...process.env, FLINT_WEB_ROOT: dataDir, ...this.env, ...extraEnv, PORT: String(port), FLINT_DATA_DIR: dataDir },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    if (process.env.CLUSTER_LOG) {
      child.stdout?.on('data', (chunk: Buffer) => process.stdout.write(chunk));
      child.stderr?.on('data', (chunk: Buffer) => process.stdout.write(chunk));
    }
    const id = await new Promise<string>((resolve, reject) => {
      const onData = () => {
        const match = /Flint gateway (\S+) is running at/.exec(out);
        if (match?.[1]) resolve(match[1]);
      };
      child.stdout?.on('data', onData);
      child.on('exit', (code) => reject(new Error(`gateway exited (${code}) before listening:\n${out}`)));
    });
    const gateway: GatewayProcess = {
      id,
      port,
      url: `http://127.0.0.1:${port}`,
      child,
      output: () => out,
      kill: (signal = 'SIGKILL') => stopGroup(child, signal),
    };
    this.all.push(gateway);
    return gateway;
  }

  /** Those not killed. */
  get running(): GatewayProcess[] {
    return this.all.filter((g) => g.child.exitCode === null && g.child.signalCode === null);
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.all.map((g) => g.kill('SIGKILL')));
    rmSync(this.dataRoot, { recursive: true, force: true });
  }
}

async function stopGroup(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    process.kill(-child.pid, signal);
  } catch {
    return;
  }
  await exited;
}

/** POST /api/workspaces on a gateway: the new workspace and its owner token. */
export async function createWorkspace(gateway: GatewayProcess, name: string, seed?: 'demo'): Promise<{ workspaceId: string; token: string }> {
  const res = await fetch(`${gateway.url}/api/workspaces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, ...(seed ? { seed } : {}) }),
  });
  if (res.status !== 201) throw new Error(`create workspace: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { workspaceId: string; url: string };
  return { workspaceId: body.workspaceId, token: new URL(body.url).hash.replace('#token=', '') };
}
