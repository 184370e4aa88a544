/**
 * B13's reference: a Hocuspocus 3 server with its Redis extension, as Hocuspocus documents
 * scaling out (several servers, one Redis, pub/sub per document), no persistence. Run as its
 * own process, `hocuspocusRedisServer.ts <redis-url> <prefix>` (started by lib/clusterHarness.ts,
 * its own process group): it reports `{ ready: { url, port } }` over IPC as childMain's children
 * do, and exits when the parent goes.
 */
import { fileURLToPath } from 'node:url';
import { Redis } from '@hocuspocus/extension-redis';
import { Server } from '@hocuspocus/server';

export interface HocuspocusRedisServer {
  /** ws://127.0.0.1:port */
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startHocuspocusRedisServer(redisUrl: string, prefix: string): Promise<HocuspocusRedisServer> {
  const redis = new URL(redisUrl);
  const server = new Server({
    port: 0,
    address: '127.0.0.1',
    quiet: true,
    stopOnSignals: false,
    extensions: [new Redis({ host: redis.hostname, port: Number(redis.port), prefix })],
  });
  await server.listen();
  const port = server.address.port;
  return { url: `ws://127.0.0.1:${port}`, port, close: () => server.destroy() };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const send = (message: unknown) => process.send?.(message);
  try {
    const server = await startHocuspocusRedisServer(process.argv[2] ?? '', process.argv[3] ?? 'hocuspocus');
    // The parent going away (a crash, Ctrl-C) must not leave servers behind.
    process.on('disconnect', () => void server.close().finally(() => process.exit(0)));
    send({ ready: { url: server.url, port: server.port } });
  } catch (error) {
    send({ error: String(error) });
    process.exit(1);
  }
}
