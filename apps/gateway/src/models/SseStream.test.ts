/** SseStream's own HTTP/1.1 over its pool: holding reads, stale kept-alive sockets, bad answers. */
import net from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConnectionPool } from './ConnectionPool';
import { ProviderError, type ReadPacer } from './ModelProvider';
import type { SseEvent } from './SseDecoder';
import { SseStream, type SseReader } from './SseStream';
import { chunk, head, sse, writeSpaced } from './sseTestWire';

/** A loopback server that hands each request's socket to `answer`, which writes the raw response. */
async function rawServer(answer: (socket: net.Socket, connection: number, request: number, text: string) => void) {
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    const connection = ++connections;
    let requests = 0;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined); // a client that destroys its end
    socket.on('data', (data) => {
      if (data.includes('\r\n\r\n')) answer(socket, connection, ++requests, data.toString('latin1'));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/v1/chat/completions`),
    get connections() {
      return connections;
    },
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Reads a stream to its end: the events, and the events of each network read. */
function readAll(stream: SseStream, onEvent?: (event: SseEvent) => void): Promise<{ events: SseEvent[]; reads: SseEvent[][]; error: unknown }> {
  return new Promise((resolve) => {
    const events: SseEvent[] = [];
    const reads: SseEvent[][] = [];
    let read: SseEvent[] = [];
    const reader: SseReader = {
      event: (event) => {
        events.push(event);
        read.push(event);
        onEvent?.(event);
      },
      readEnd: () => {
        if (read.length > 0) reads.push(read);
        read = [];
      },
      end: () => resolve({ events, reads, error: null }),
      fail: (error) => resolve({ events, reads, error }),
    };
    stream.read(reader);
  });
}

const pools: ConnectionPool[] = [];
afterEach(() => {
  for (const pool of pools.splice(0)) pool.close();
});

function open(url: URL, pacer?: ReadPacer, more: { headers?: Record<string, string>; signal?: AbortSignal; idleTimeoutMs?: number } = {}) {
  const pool = new ConnectionPool();
  pools.push(pool);
  return { pool, request: { url, headers: more.headers ?? {}, body: { stream: true }, pool, signal: more.signal ?? new AbortController().signal, idleTimeoutMs: more.idleTimeoutMs ?? 5_000, provider: 'fake', pacer } };
}

describe('SseStream', () => {
  it('leaves the socket unread until the consumer lets it in, then reads what came in one go', async () => {
    let writeSecond = () => {};
    let writeRest = (_done: () => void) => {};
    const server = await rawServer((socket) => {
      socket.write(head + chunk(sse('first')));
      writeSecond = () => socket.write(chunk(sse('second')));
      writeRest = (done) => writeSpaced(socket, 40, done);
    });
    const expected = ['first', 'second', ...Array.from({ length: 40 }, (_, i) => `t${i}`)];
    // 'first' comes with the head, before the read: once it is in, the server writes 'second',
    // the first read a hold can follow.
    const onEvent = (event: SseEvent) => event.data === 'first' && writeSecond();
    let holds = 0;
    // Asked as the socket is about to be held: the server writes the rest, then the consumer's
    // "flush" lets the socket in.
    const held = open(server.url, {
      holdUntilFlush: (resume) => {
        if (holds++ === 0) writeRest(() => setTimeout(resume, 20));
        else setTimeout(resume, 20);
        return true;
      },
    });
    const heldRun = await readAll((await SseStream.open(held.request))!, onEvent);
    expect(heldRun.error).toBeNull();
    expect(heldRun.events.map((e) => e.data)).toEqual(expected);
    // Without the hold each write is its own read (the client is idle and reads between them).
    expect(heldRun.reads.length).toBeLessThanOrEqual(5);
    // Nothing to wait for: read at once.
    const unheld = open(server.url, { holdUntilFlush: () => false });
    const unheldRun = await readAll((await SseStream.open(unheld.request))!, (event) => (onEvent(event), event.data === 'second' && writeRest(() => undefined)));
    expect(unheldRun.events.map((e) => e.data)).toEqual(expected);
    expect(unheldRun.reads.length).toBeGreaterThan(10);
    await server.close();
  });

  it('reads on when the response is dropped while held, and a late resume does nothing', async () => {
    const server = await rawServer((socket) => {
      socket.write(head + chunk(sse('first')));
      setImmediate(() => socket.write(chunk(sse('second'))));
    });
    let resume = () => {};
    const { request } = open(server.url, {
      holdUntilFlush: (r) => {
        resume = r;
        return true;
      },
    });
    const stream = (await SseStream.open(request))!;
    const seen: string[] = [];
    await new Promise<void>((resolve) =>
      stream.read({
        event: (event) => {
          seen.push(event.data);
          if (event.data === 'second') resolve();
        },
        readEnd: () => undefined,
        end: () => undefined,
        fail: () => undefined,
      }),
    );
    stream.destroy();
    expect(() => resume()).not.toThrow();
    expect(seen).toEqual(['first', 'second']);
    await server.close();
  });

  it('reads at once when the consumer has nothing to wait for', async () => {
    let release: () => void = () => undefined;
    const server = await rawServer((socket) => {
      socket.write(head + chunk(sse('first')));
      release = () => socket.write(chunk(sse('second')) + '0\r\n\r\n');
    });
    const { request } = open(server.url, { holdUntilFlush: () => false });
    const stream = (await SseStream.open(request))!;
    const seen: string[] = [];
    const done = new Promise<void>((resolve) =>
      stream.read({
        event: (event) => {
          seen.push(event.data);
          if (event.data === 'first') release();
        },
        readEnd: () => undefined,
        end: resolve,
        fail: resolve,
      }),
    );
    await done;
    expect(seen).toEqual(['first', 'second']);
    await server.close();
  });

  it('writes a request on a kept-alive connection before `open` returns: no await before it leaves', async () => {
    const server = await rawServer((socket, _connection, request) => socket.write(head + chunk(sse(`r${request}`)) + '0\r\n\r\n'));
    const { request } = open(server.url);
    await readAll((await SseStream.open(request))!); // its socket goes back to the pool
    const writes = vi.spyOn(net.Socket.prototype, 'write');
    try {
      const opening = SseStream.open(request);
      // Still in the caller's turn of the event loop: what it does next (a turn's first status)
      // must not go ahead of the request.
      expect(writes.mock.calls.map(([data]) => String(data).split('\r\n')[0])).toEqual(['POST /v1/chat/completions HTTP/1.1']);
      expect((await readAll((await opening)!)).events.map((e) => e.data)).toEqual(['r2']);
    } finally {
      writes.mockRestore();
    }
    expect(server.connections).toBe(1);
    await server.close();
  });

  it('asks again on a new connection when a kept-alive one closes before answering', async () => {
    const server = await rawServer((socket, connection, request) => {
      if (connection === 1 && request === 2) return socket.destroy(); // the server's idle close, racing our request
      socket.write(head + chunk(sse(`c${connection}r${request}`)) + '0\r\n\r\n');
    });
    const { request } = open(server.url);
    const first = await readAll((await SseStream.open(request))!);
    const second = await readAll((await SseStream.open(request))!);
    expect(first.events.map((e) => e.data)).toEqual(['c1r1']);
    expect(second.events.map((e) => e.data)).toEqual(['c2r1']);
    expect(server.connections).toBe(2);
    await server.close();
  });

  it('reports an answer that is not HTTP as network, saying so', async () => {
    const server = await rawServer((socket) => socket.end('SSH-2.0-OpenSSH_9.6\r\n\r\n'));
    const { request } = open(server.url);
    const error = await SseStream.open(request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).code).toBe('network');
    expect((error as ProviderError).message).toContain('not HTTP/1.1');
    await server.close();
  });

  it('reads a successful answer from the read that brought its head, given a reader for it; not an error answer', async () => {
    let writeRest = () => {};
    const server = await rawServer((socket, _connection, request) => {
      if (request > 1) return socket.end('HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nContent-Length: 45\r\n\r\n{"error":{"message":"slow down","type":"x"}}\n');
      socket.write(head + chunk(sse('first')));
      writeRest = () => socket.write(chunk(sse('second')) + '0\r\n\r\n');
    });
    const { request } = open(server.url);
    const events: string[] = [];
    let ended!: () => void;
    const end = new Promise<void>((resolve) => (ended = resolve));
    const reader: SseReader = { event: (event) => events.push(event.data), readEnd: () => undefined, end: () => ended(), fail: (error) => { throw error; } };
    let handed: SseStream | null = null;
    const stream = await SseStream.open(request, (s) => ((handed = s), reader));
    // Already delivered when `open` resolves: in the socket callback, not a promise hop later.
    expect(events).toEqual(['first']);
    expect(handed).toBe(stream);
    writeRest();
    await end;
    expect(events).toEqual(['first', 'second']);
    let asked = false;
    const error = await SseStream.open(request, () => ((asked = true), reader)).catch((e: unknown) => e);
    expect((error as ProviderError).code).toBe('rate_limited');
    expect(asked).toBe(false);
    await server.close();
  });

  it('fails a read whose connection breaks mid-body, after the events before it', async () => {
    const server = await rawServer((socket) => {
      socket.write(head + chunk(sse('a')), () => socket.destroy());
    });
    const { request } = open(server.url);
    const { events, error } = await readAll((await SseStream.open(request))!);
    expect(events.map((e) => e.data)).toEqual(['a']);
    expect((error as ProviderError).code).toBe('network');
    await server.close();
  });

  it('sends one of each header whatever its case (the body\'s own framing last), and refuses a value with a line break', async () => {
    let seen = '';
    const server = await rawServer((socket, _c, _r, text) => {
      seen = text;
      socket.write(head + '0\r\n\r\n');
    });
    const { request } = open(server.url, undefined, { headers: { Host: 'elsewhere', 'X-Org': 'a', 'x-org': 'b', Accept: 'text/html' } });
    await readAll((await SseStream.open(request))!);
    const lines = seen.split('\r\n');
    expect(lines.filter((line) => /^host:/i.test(line))).toEqual(['Host: elsewhere']); // configuration may name the host, as with node:http
    expect(lines.filter((line) => /^x-org:/i.test(line))).toEqual(['x-org: b']);
    expect(lines.filter((line) => /^accept:/i.test(line))).toEqual(['accept: text/event-stream']);
    const bad = open(server.url, undefined, { headers: { authorization: 'Bearer a\r\nx-injected: 1' } });
    const error = await SseStream.open(bad.request).catch((e: unknown) => e);
    expect((error as ProviderError).code).toBe('not_configured');
    await server.close();
  });

  it('stops reading an error answer at once when the signal aborts', async () => {
    const server = await rawServer((socket) => socket.write('HTTP/1.1 500 Internal Server Error\r\nContent-Length: 100\r\n\r\n{"error"'));
    const controller = new AbortController();
    // A stalled body would otherwise hold the request for the whole idle timeout (a minute here).
    const { request } = open(server.url, undefined, { signal: controller.signal, idleTimeoutMs: 60_000 });
    // Aborts once the head has been read (the turn after the first bytes): while the body stalls.
    const connect = request.pool.connect.bind(request.pool);
    request.pool.connect = async (...args) => {
      const connection = await connect(...args);
      connection.socket.once('data', () => setImmediate(() => controller.abort()));
      return connection;
    };
    expect(await SseStream.open(request)).toBeNull();
    await server.close();
  });
});
