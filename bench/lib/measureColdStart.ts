/**
 * Time from spawning a server process to its first successful HTTP answer, polling every few
 * milliseconds. The process runs in its own group and is killed by group afterwards.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function answers(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get(url, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.setTimeout(1_000, () => req.destroy());
  });
}

/** Milliseconds from spawn to the first 200 from `path`. */
export async function measureColdStart(command: string, args: string[], env: Record<string, string>, path: string, cwd: string, timeoutMs = 60_000): Promise<number> {
  const port = await freePort();
  const t0 = performance.now();
  const child = spawn(command, args, { cwd, env: { ...env, PORT: String(port) }, detached: true, stdio: 'ignore' });
  let exited: number | null = null;
  child.once('exit', (code) => (exited = code ?? -1));
  try {
    for (;;) {
      if (await answers(`http://127.0.0.1:${port}${path}`)) return performance.now() - t0;
      if (exited !== null) throw new Error(`${command} ${args.join(' ')} exited with ${exited} before answering`);
      if (performance.now() - t0 > timeoutMs) throw new Error(`${command} ${args.join(' ')} did not answer within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  } finally {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}
