/**
 * One WebSocket to the Responses API (`wss://…/v1/responses`). It carries one response at a time
 * (the WebSocket mode runs turns sequentially per connection); the pool decides who uses it.
 */
import { performance } from 'node:perf_hooks';
import { HttpsProxyAgent } from 'https-proxy-agent';
import WebSocket from 'ws';
import { ProviderError } from '../core/ports/ModelProvider';
import { ProxyConfigError, proxyForUrl, type ProxyEnv } from './proxyForUrl';

/** What `next()` resolves to besides a parsed event. */
export const socketClosed = Symbol('closed');
export const socketIdle = Symbol('idle');
export const socketGarbage = Symbol('garbage');
export type SocketMessage = unknown;

/** The server answered the upgrade with an HTTP status instead of 101. */
export class UpgradeRefused extends Error {
  constructor(
    readonly status: number,
    readonly headers: Record<string, string | string[] | undefined>,
  ) {
    super(`WebSocket upgrade refused with HTTP ${status}`);
    this.name = 'UpgradeRefused';
  }
}

export class ResponsesSocket {
  /** Events that arrived before the reader asked; `head` avoids O(n) shifts when it lags. */
  private queue: unknown[] = [];
  private head = 0;
  private waiter: ((message: unknown) => void) | null = null;
  private closed = false;
  private lastMessageAt = 0;
  private idleTimer: NodeJS.Timeout | null = null;
  private readonly closeListeners: Array<() => void> = [];

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      this.lastMessageAt = performance.now();
      let message: unknown = socketGarbage;
      if (!isBinary) {
        try {
          message = JSON.parse(data.toString('utf8'));
        } catch {
          // Stays `socketGarbage`: the reader turns it into a bad_response.
        }
      }
      this.deliver(message);
    });
    ws.on('close', () => this.markClosed());
    // Errors after the handshake are followed by 'close'; that is where the reader learns of them.
    ws.on('error', () => undefined);
  }

  /**
   * Opens a connection; rejects with UpgradeRefused or a ProviderError (`network`, or
   * `not_configured` for a proxy variable Flint cannot use). Through the
   * proxy `proxyForUrl` picks from `env` for its URL — the decision the HTTP requests take
   * (ProviderHttp) — or directly.
   */
  static open(url: string, headers: Record<string, string>, timeoutMs: number, provider: string, env: ProxyEnv = process.env): Promise<ResponsesSocket> {
    return new Promise((resolve, reject) => {
      let proxy: URL | null;
      try {
        proxy = proxyForUrl(new URL(url), env);
      } catch (error) {
        if (!(error instanceof ProxyConfigError)) throw error;
        return reject(new ProviderError('not_configured', `${provider}: ${error.message}`, null, provider));
      }
      const agent = proxy ? new HttpsProxyAgent(proxy) : undefined;
      const ws = new WebSocket(url, { headers, handshakeTimeout: timeoutMs, perMessageDeflate: false, agent });
      let settled = false;
      ws.once('unexpected-response', (req, res) => {
        settled = true;
        reject(new UpgradeRefused(res.statusCode ?? 0, res.headers));
        req.destroy();
        res.resume();
      });
      ws.once('open', () => {
        settled = true;
        resolve(new ResponsesSocket(ws));
      });
      ws.on('error', (error: NodeJS.ErrnoException) => {
        if (settled) return;
        settled = true;
        ws.terminate();
        reject(new ProviderError('network', `${provider}: could not open the WebSocket (${error.code ?? 'handshake failed'}) — check the network and the base URL.`, null, provider));
      });
    });
  }

  get isOpen(): boolean {
    return !this.closed && this.ws.readyState === WebSocket.OPEN;
  }

  onClose(listener: () => void): void {
    if (this.closed) listener();
    else this.closeListeners.push(listener);
  }

  send(message: object): void {
    this.ws.send(JSON.stringify(message));
  }

  /** The next event, or a sentinel: `socketClosed`, `socketIdle` (watch fired), `socketGarbage`. */
  next(): Promise<unknown> {
    if (this.head < this.queue.length) {
      const message = this.queue[this.head++];
      if (this.head === this.queue.length) {
        this.queue = [];
        this.head = 0;
      }
      return Promise.resolve(message);
    }
    if (this.closed) return Promise.resolve(socketClosed);
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }

  /** Every message already received and not yet read (those of the same network read as the last `next()`), in order. */
  takeQueued(): unknown[] {
    if (this.head >= this.queue.length) return [];
    const messages = this.head === 0 ? this.queue : this.queue.slice(this.head);
    this.queue = [];
    this.head = 0;
    return messages;
  }

  /** While a response streams: no message for `idleMs` delivers `socketIdle` and closes the socket. */
  watchIdle(idleMs: number): void {
    this.lastMessageAt = performance.now();
    const check = () => {
      const quietMs = performance.now() - this.lastMessageAt;
      if (quietMs < idleMs) {
        this.idleTimer = setTimeout(check, idleMs - quietMs);
        return;
      }
      this.idleTimer = null;
      this.deliver(socketIdle);
      // A stalled server may not answer a close handshake either.
      this.close(true);
    };
    this.idleTimer = setTimeout(check, idleMs);
  }

  unwatchIdle(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  /** Closing is also how a response is cancelled: the server stops generating for a gone client. */
  close(terminate = false): void {
    this.unwatchIdle();
    if (terminate) this.ws.terminate();
    else if (this.ws.readyState === WebSocket.OPEN) this.ws.close(1000);
    this.markClosed();
  }

  private deliver(message: unknown): void {
    const waiter = this.waiter;
    if (waiter) {
      this.waiter = null;
      waiter(message);
    } else {
      this.queue.push(message);
    }
  }

  private markClosed(): void {
    if (this.closed) return;
    this.closed = true;
    this.unwatchIdle();
    this.deliver(socketClosed);
    for (const listener of this.closeListeners.splice(0)) listener();
  }
}
