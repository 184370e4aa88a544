import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

export interface SpawnedGateway {
  child: ChildProcess;
  /** The first URL it printed (an owner link, or the playground's address). */
  url: URL;
  output(): string;
}

/**
 * main.ts on port 0 in a process group of its own, with no provider configured (as `npm start`
 * on a fresh machine); resolves once it printed a line matching `ready` (its first group: a URL).
 */
export function spawnGateway(args: string[], env: NodeJS.ProcessEnv, ready: RegExp): Promise<SpawnedGateway> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, FLINT_PROVIDER: 'embedded', ...env };
  for (const name of ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'FLINT_CONFIG', 'FLINT_MODEL_FAST', 'FLINT_MODEL_DEEP', 'FLINT_PLAYGROUND']) if (!(name in env)) delete childEnv[name];
  const child = spawn(process.execPath, ['--import', 'tsx', 'apps/gateway/src/main.ts', '--port', '0', ...args], { cwd: repoRoot, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: childEnv });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`The gateway exited (${code}) before it was ready:\n${output}`));
    child.once('exit', onExit);
    child.stdout!.on('data', () => {
      const match = ready.exec(output);
      if (!match) return;
      child.off('exit', onExit);
      resolve({ child, url: new URL(match[1]!), output: () => output });
    });
  });
}

/** SIGTERM to its process group, SIGKILL after 10 s. */
export async function stopGateway(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  process.kill(-child.pid!, 'SIGTERM');
  const killed = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 10_000);
  await exited;
  clearTimeout(killed);
}
