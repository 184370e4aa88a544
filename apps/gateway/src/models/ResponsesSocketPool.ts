/**
 * The Responses WebSockets of one provider. A socket carries one response at a time, so
 * concurrent requests (a chat turn while autocomplete runs) each get their own socket, up to
 * `maxSockets`; past that they queue. A request prefers the socket its thread last used, because
 * with `store: false` the server keeps the previous response only in that connection's memory.
 */
import { ResponsesSocket } from './ResponsesSocket';

export class ResponsesSocketPool {
  private readonly sockets = new Set<ResponsesSocket>();
  private readonly idle = new Set<ResponsesSocket>();
  private opening = 0;
  private readonly waiters: Array<(socket: ResponsesSocket | null) => void> = [];
  private closed = false;

  constructor(
    private readonly open: () => Promise<ResponsesSocket>,
    private readonly maxSockets: number,
  ) {}

  /**
   * An open socket reserved for the caller until `release`; null once `signal` aborts. Throws
   * what opening a socket throws (UpgradeRefused, a `network` ProviderError).
   */
  async acquire(preferred: ResponsesSocket | null, signal: AbortSignal): Promise<ResponsesSocket | null> {
    for (;;) {
      if (signal.aborted || this.closed) return null;
      const socket = this.idleSocket(preferred);
      if (socket) return socket;
      if (this.sockets.size + this.opening < this.maxSockets) return this.openOne();
      const freed = await new Promise<ResponsesSocket | null>((resolve) => {
        const onAbort = () => {
          this.waiters.splice(this.waiters.indexOf(wake), 1);
          resolve(null);
        };
        const wake = (socket: ResponsesSocket | null) => {
          signal.removeEventListener('abort', onAbort);
          resolve(socket);
        };
        this.waiters.push(wake);
        signal.addEventListener('abort', onAbort, { once: true });
      });
      if (freed) return freed;
    }
  }

  /** Hands a socket back: to a queued request, or to the idle set if it is still open. */
  release(socket: ResponsesSocket): void {
    if (!socket.isOpen || this.closed) {
      this.sockets.delete(socket);
      this.wakeOne(null);
      return;
    }
    const waiter = this.waiters.shift();
    if (waiter) waiter(socket);
    else this.idle.add(socket);
  }

  /**
   * Opens a socket in the background when none is idle, so the request after a cancel (which
   * closed its socket) does not pay the handshake.
   */
  prewarm(): void {
    if (this.closed || this.idle.size > 0 || this.sockets.size + this.opening >= this.maxSockets) return;
    this.openOne().then(
      (socket) => socket && this.release(socket),
      // Nothing waits on a prewarm: the next request opens its own socket and reports its error.
      () => undefined,
    );
  }

  closeAll(): void {
    this.closed = true;
    for (const socket of this.sockets) socket.close();
    this.sockets.clear();
    this.idle.clear();
    for (const waiter of this.waiters.splice(0)) waiter(null);
  }

  /**
   * An idle open socket reserved for the caller until `release` (`preferred` if it is idle), now,
   * or null. No await: a request sent on it leaves in the caller's turn of the event loop.
   */
  idleSocket(preferred: ResponsesSocket | null): ResponsesSocket | null {
    if (this.closed) return null;
    if (preferred && this.idle.has(preferred) && preferred.isOpen) {
      this.idle.delete(preferred);
      return preferred;
    }
    for (const socket of this.idle) {
      this.idle.delete(socket);
      if (socket.isOpen) return socket;
      this.sockets.delete(socket);
    }
    return null;
  }

  /** Null when the pool was closed while the handshake ran. */
  private async openOne(): Promise<ResponsesSocket | null> {
    this.opening++;
    let opened = false;
    try {
      const socket = await this.open();
      opened = true;
      if (this.closed) {
        socket.close();
        return null;
      }
      this.sockets.add(socket);
      // A socket the server closes while idle (its connection time cap) leaves the pool at once.
      socket.onClose(() => {
        this.idle.delete(socket);
        this.sockets.delete(socket);
      });
      return socket;
    } finally {
      this.opening--;
      // A failed handshake frees the capacity a queued request may be waiting for.
      if (!opened) this.wakeOne(null);
    }
  }

  private wakeOne(socket: ResponsesSocket | null): void {
    // A waiter woken with null retries acquire, which may now open a socket of its own.
    this.waiters.shift()?.(socket);
  }
}
