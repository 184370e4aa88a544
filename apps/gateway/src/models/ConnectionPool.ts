/**
 * Kept-alive connections to a provider's origins (TCP, or TLS for https), reused last-in
 * first-out so the warmest socket goes first. One pool per provider; `SseStream` speaks
 * HTTP/1.1 over them (decision 0014).
 */
import net from 'node:net';
import tls from 'node:tls';

export interface Connection {
  socket: net.Socket;
  /** It served a request before: a failure before any answer may be the server's idle close. */
  reused: boolean;
}

/** Idle sockets kept per origin, and for how long (servers close theirs after 5–60 s). */
const maxIdlePerOrigin = 64;
const idleMs = 4_000;

interface IdleSocket {
  socket: net.Socket;
  timer: NodeJS.Timeout;
  forget(): void;
}

export interface ConnectionPoolOptions {
  /**
   * Certificate authorities to trust for https origins instead of Node's (a provider behind a
   * private CA; the tests' own). Flint itself leaves this unset: `NODE_EXTRA_CA_CERTS` adds to
   * Node's list for a whole process.
   */
  ca?: string | Buffer;
}

export class ConnectionPool {
  private readonly idle = new Map<string, IdleSocket[]>();
  private closed = false;

  constructor(private readonly options: ConnectionPoolOptions = {}) {}

  /** TLS sessions per origin, so a new connection resumes instead of a full handshake. */
  private readonly sessions = new Map<string, Buffer>();

  /**
   * Writes `request` on an idle connection to `url`'s origin and hands that connection over, or
   * returns null when there is none. Synchronous, so the request leaves in the turn of the event
   * loop it was made in (see `SseStream.open`); the pool lets go of the socket after writing,
   * which no byte of the answer can arrive before.
   */
  sendOnIdle(url: URL, request: string): Connection | null {
    const idle = this.idle.get(originOf(url));
    while (idle && idle.length > 0) {
      const entry = idle.pop()!;
      if (entry.socket.destroyed || entry.socket.readyState !== 'open') {
        entry.forget();
        continue;
      }
      entry.socket.write(request);
      entry.forget();
      entry.socket.ref();
      return { socket: entry.socket, reused: true };
    }
    return null;
  }

  /** A new connection to `url`'s origin, once it is connected. */
  async connect(url: URL, signal: AbortSignal): Promise<Connection> {
    if (this.closed) throw new Error('the connection pool is closed');
    const origin = originOf(url);
    const socket = await open(url, signal, this.sessions.get(origin), this.options.ca);
    if (socket instanceof tls.TLSSocket) socket.on('session', (session: Buffer) => this.sessions.set(origin, session));
    return { socket, reused: false };
  }

  /**
   * A response ended on `socket` and the server keeps it open: it waits for the next request.
   * Anything it hears meanwhile (a close, an error, stray bytes) ends it.
   */
  release(url: URL, socket: net.Socket): void {
    if (this.closed || socket.destroyed || socket.readyState !== 'open') {
      socket.destroy();
      return;
    }
    const origin = originOf(url);
    const list = this.idle.get(origin) ?? [];
    this.idle.set(origin, list);
    const drop = () => {
      entry.forget();
      const at = list.indexOf(entry);
      if (at !== -1) list.splice(at, 1);
      socket.destroy();
    };
    const entry: IdleSocket = {
      socket,
      timer: setTimeout(drop, idleMs).unref(),
      forget: () => {
        clearTimeout(entry.timer);
        socket.off('close', drop);
        socket.off('end', drop);
        socket.off('error', drop);
        socket.off('data', drop);
      },
    };
    socket.on('close', drop);
    socket.on('end', drop);
    socket.on('error', drop);
    socket.on('data', drop);
    socket.resume();
    // An idle connection does not keep the process alive (as Node's agent does not).
    socket.unref();
    list.push(entry);
    if (list.length > maxIdlePerOrigin) {
      const oldest = list.shift()!;
      oldest.forget();
      oldest.socket.destroy();
    }
  }

  close(): void {
    this.closed = true;
    for (const list of this.idle.values()) {
      for (const entry of list) {
        entry.forget();
        entry.socket.destroy();
      }
    }
    this.idle.clear();
  }
}

function originOf(url: URL): string {
  return `${url.protocol}//${url.host}`;
}

function open(url: URL, signal: AbortSignal, session: Buffer | undefined, ca: string | Buffer | undefined): Promise<net.Socket> {
  const secure = url.protocol === 'https:';
  const port = Number(url.port || (secure ? 443 : 80));
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  // A high-water mark of one byte: a paused socket stops reading at once (see SseStream's hold).
  // `tls.connect` takes only `highWaterMark`, for both directions: a write is then always "over
  // the mark", which nothing here waits on. Node's type definitions list neither option.
  const tlsOptions: tls.ConnectionOptions = { host, port, servername: net.isIP(host) ? undefined : host, ALPNProtocols: ['http/1.1'], session, ca, ...{ highWaterMark: 1 } };
  const tcpOptions: net.NetConnectOpts = { host, port, ...{ readableHighWaterMark: 1 } };
  const socket = secure ? tls.connect(tlsOptions) : net.connect(tcpOptions);
  socket.setNoDelay(true);
  socket.setKeepAlive(true, 1_000);
  return new Promise((resolve, reject) => {
    const onAbort = () => socket.destroy();
    const settle = (error: Error | null) => {
      socket.off(secure ? 'secureConnect' : 'connect', onConnect);
      socket.off('error', onError);
      socket.off('close', onClose);
      signal.removeEventListener('abort', onAbort);
      if (error) reject(error);
      else resolve(socket);
    };
    const onConnect = () => settle(null);
    const onError = (error: Error) => settle(error);
    const onClose = () => settle(Object.assign(new Error('the connection closed while connecting'), { code: 'ECONNRESET' }));
    socket.once(secure ? 'secureConnect' : 'connect', onConnect);
    socket.once('error', onError);
    socket.once('close', onClose);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
