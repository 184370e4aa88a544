/**
 * Flint's own HTTP/1.1 client over TLS, as every hosted provider is reached: a loopback TLS
 * server with a test certificate (testdata/, for localhost and 127.0.0.1, self-signed).
 */
import { readFileSync } from 'node:fs';
import type net from 'node:net';
import tls from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionPool } from './ConnectionPool';
import { ProviderError, type ReadPacer } from './ModelProvider';
import type { SseEvent } from './SseDecoder';
import { SseStream } from './SseStream';
import { chunk, head, sse, writeSpaced } from './sseTestWire';

const key = readFileSync(new URL('./testdata/localhost.key.pem', import.meta.url));
const cert = readFileSync(new URL('./testdata/localhost.cert.pem', import.meta.url));

interface Served {
  socket: tls.TLSSocket;
  connection: number;
}

/** A TLS server that hands each request's socket to `answer`. */
async function tlsServer(answer: (served: Served) => void) {
  let connections = 0;
  const resumed: boolean[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const sockets = new Set<tls.TLSSocket>();
  const server = tls.createServer({ key, cert, ALPNProtocols: ['http/1.1'] }, (socket) => {
    const connection = ++connections;
    resumed.push(socket.isSessionReused());
    for (const waiter of waiters.filter((w) => w.count <= connections)) waiter.resolve();
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let request = '';
    socket.on('data', (data: Buffer) => {
      request += data.toString('latin1');
      const end = request.indexOf('\r\n\r\n');
      if (end === -1) return;
      const length = Number(/content-length: *(\d+)/i.exec(request.slice(0, end))?.[1] ?? 0);
      if (request.length < end + 4 + length) return;
      request = request.slice(end + 4 + length);
      answer({ socket, connection });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    port,
    resumed,
    get connections() {
      return connections;
    },
    /** Resolves once the server has accepted `count` connections (its side of each handshake done). */
    accepted: (count: number) => new Promise<void>((resolve) => (connections >= count ? resolve() : waiters.push({ count, resolve }))),
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const pools: ConnectionPool[] = [];
afterEach(() => {
  for (const pool of pools.splice(0)) pool.close();
});

function request(url: string, pool: ConnectionPool, pacer?: ReadPacer) {
  return { url: new URL(url), headers: {}, body: { stream: true }, pool, signal: new AbortController().signal, idleTimeoutMs: 5_000, provider: 'fake', pacer };
}

function trusting(): ConnectionPool {
  const pool = new ConnectionPool({ ca: cert });
  pools.push(pool);
  return pool;
}

/** Reads a stream to its end: the events' data and how many network reads brought them. */
function readAll(stream: SseStream, onEvent?: (event: SseEvent) => void): Promise<{ data: string[]; reads: number; error: unknown }> {
  return new Promise((resolve) => {
    const data: string[] = [];
    let reads = 0;
    let inRead = false;
    stream.read({
      event: (event) => {
        data.push(event.data);
        inRead = true;
        onEvent?.(event);
      },
      readEnd: () => {
        if (inRead) reads++;
        inRead = false;
      },
      end: () => resolve({ data, reads, error: null }),
      fail: (error) => resolve({ data, reads, error }),
    });
  });
}

describe('SseStream over TLS', () => {
  it('streams an answer from a host name and from an IP address, and holds reads on the TLS socket', async () => {
    let writeSecond = () => {};
    let writeRest = (_done: () => void) => {};
    const server = await tlsServer(({ socket }) => {
      socket.write(head + chunk(sse('first')));
      writeSecond = () => socket.write(chunk(sse('second')));
      writeRest = (done) => writeSpaced(socket, 40, done);
    });
    // 'first' comes with the head, before the read; 'second' is the first read a hold can follow.
    const onEvent = (event: SseEvent) => event.data === 'first' && writeSecond();
    const expected = ['first', 'second', ...Array.from({ length: 40 }, (_, i) => `t${i}`)];
    for (const host of ['localhost', '127.0.0.1']) {
      let holds = 0;
      let heldUntil = Infinity;
      const heardWhileHeld: string[] = [];
      const pacer: ReadPacer = {
        holdUntilFlush: (resume) => {
          // Held after the read of 'second': the server writes everything meanwhile, then the
          // "flush" lets it in (later holds: 20 ms each, like a flush interval).
          const release = () => {
            heldUntil = Infinity;
            resume();
          };
          heldUntil = 0;
          if (holds++ === 0) writeRest(() => setTimeout(release, 20));
          else setTimeout(release, 20);
          return true;
        },
      };
      const run = await readAll((await SseStream.open(request(`https://${host}:${server.port}/v1/chat/completions`, trusting(), pacer)))!, (event) => {
        onEvent(event);
        if (heldUntil === 0) heardWhileHeld.push(event.data);
      });
      expect(run.error).toBeNull();
      expect(run.data).toEqual(expected);
      // Nothing is read while held; what was let in is read as one, though TLS hands a socket
      // read over as a chunk per record (40 here).
      expect(heardWhileHeld).toEqual([]);
      expect(holds).toBeGreaterThan(0);
      expect(run.reads).toBeLessThanOrEqual(5);
    }
    const unheld = await readAll((await SseStream.open(request(`https://localhost:${server.port}/v1/chat/completions`, trusting())))!, (event) => (onEvent(event), event.data === 'second' && writeRest(() => undefined)));
    expect(unheld.data).toEqual(expected);
    expect(unheld.reads).toBeGreaterThan(10);
    await server.close();
  });

  it('reuses the kept-alive TLS connection, and resumes the TLS session on a new one', async () => {
    const server = await tlsServer(({ socket, connection }) => socket.write(head + chunk(sse(`c${connection}`)) + '0\r\n\r\n'));
    const pool = trusting();
    const url = `https://localhost:${server.port}/v1/chat/completions`;
    const first = await readAll((await SseStream.open(request(url, pool)))!);
    const second = await readAll((await SseStream.open(request(url, pool)))!);
    expect([first.data, second.data]).toEqual([['c1'], ['c1']]);
    expect(server.connections).toBe(1);
    // A new connection (as after the server's idle close) resumes the session the pool kept.
    const fresh = await pool.connect(new URL(url), new AbortController().signal);
    await server.accepted(2);
    expect((fresh.socket as tls.TLSSocket).isSessionReused()).toBe(true);
    expect(server.resumed).toEqual([false, true]);
    fresh.socket.destroy();
    await server.close();
  });

  it('refuses a certificate it does not trust, saying which and how to trust one', async () => {
    const server = await tlsServer(({ socket }) => socket.write(head + chunk(sse('never')) + '0\r\n\r\n'));
    const pool = new ConnectionPool(); // Node's certificate authorities only
    pools.push(pool);
    const error = await SseStream.open(request(`https://localhost:${server.port}/v1/chat/completions`, pool)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).code).toBe('network');
    expect((error as ProviderError).message).toMatch(/TLS certificate was not accepted \(DEPTH_ZERO_SELF_SIGNED_CERT/);
    expect((error as ProviderError).message).toContain('NODE_EXTRA_CA_CERTS');
    await server.close();
  });
});
