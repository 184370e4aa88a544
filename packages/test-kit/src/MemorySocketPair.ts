/**
 * An in-memory WebSocket: a server end shaped like the gateway core's `PeerSocket`
 * and a client end shaped like the browser `WebSocket` that packages/client expects.
 * Frames queue until `flush()`, so tests decide exactly when the network delivers.
 */

export interface ServerEnd {
  send(data: Uint8Array): void;
  close(code: number, reason: string): void;
  readonly isOpen: boolean;
  /** Bytes sent and not yet delivered to the client: what a real socket's write buffer holds. */
  readonly bufferedBytes: number;
}

export interface ServerHandlers {
  onMessage(data: Uint8Array): void;
  onClose(): void;
  /** Everything queued for the client was delivered (a real socket's 'drain'). */
  onDrain?(): void;
}

type Listener = (event: { data?: unknown; code?: number; reason?: string }) => void;

export class MemoryClientSocket {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSING = 2;
  static readonly CLOSED = 3;
  readyState = MemoryClientSocket.CONNECTING;
  binaryType = 'arraybuffer';
  onopen: Listener | null = null;
  onmessage: Listener | null = null;
  onclose: Listener | null = null;
  onerror: Listener | null = null;

  constructor(private readonly pair: MemorySocketPair) {}

  send(data: Uint8Array | ArrayBuffer): void {
    if (this.readyState !== MemoryClientSocket.OPEN) throw new Error('send on a socket that is not open');
    const bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
    this.pair.toServer.push(bytes.slice());
  }

  close(code = 1000, reason = ''): void {
    this.pair.disconnect(code, reason);
  }
}

export class MemorySocketPair {
  readonly toServer: Uint8Array[] = [];
  readonly toClient: Uint8Array[] = [];
  readonly client: MemoryClientSocket;
  readonly server: ServerEnd;
  closeCode: number | null = null;
  closeReason = '';
  /**
   * The client stopped reading (a slow network, a suspended tab): frames to it stay queued,
   * and `bufferedBytes` grows, until this is cleared and the pair flushed.
   */
  stalled = false;
  private queuedBytes = 0;
  private handlers: ServerHandlers | null = null;
  private opened = false;
  private closeDelivered = false;

  constructor() {
    this.client = new MemoryClientSocket(this);
    const pair = this;
    this.server = {
      send(data) {
        if (pair.closeCode !== null) return;
        pair.toClient.push(data.slice());
        pair.queuedBytes += data.byteLength;
      },
      close(code, reason) {
        pair.disconnect(code, reason);
      },
      get isOpen() {
        return pair.closeCode === null;
      },
      get bufferedBytes() {
        return pair.queuedBytes;
      },
    };
  }

  /** Attaches the server side (what the transport does on upgrade). */
  accept(handlers: ServerHandlers): void {
    this.handlers = handlers;
  }

  /** Ends the connection as a network failure or either side would, with a close code. */
  disconnect(code: number, reason = ''): void {
    if (this.closeCode !== null) return;
    this.closeCode = code;
    this.closeReason = reason;
    this.client.readyState = MemoryClientSocket.CLOSING;
  }

  /** Delivers queued frames both ways until nothing moves. Returns frames delivered. */
  flush(): number {
    let delivered = 0;
    let drained = false;
    if (!this.opened && this.closeCode === null) {
      this.opened = true;
      this.client.readyState = MemoryClientSocket.OPEN;
      this.client.onopen?.({});
    }
    for (;;) {
      const toServer = this.toServer.shift();
      if (toServer) {
        if (this.closeCode === null) this.handlers?.onMessage(toServer);
        delivered++;
        continue;
      }
      const toClient = this.stalled ? undefined : this.toClient.shift();
      if (toClient) {
        this.queuedBytes -= toClient.byteLength;
        drained = this.toClient.length === 0;
        this.client.onmessage?.({ data: toClient.buffer.slice(toClient.byteOffset, toClient.byteOffset + toClient.byteLength) });
        delivered++;
        continue;
      }
      if (drained && this.closeCode === null && this.handlers?.onDrain) {
        drained = false;
        this.handlers.onDrain();
        continue;
      }
      break;
    }
    if (this.closeCode !== null && !this.closeDelivered) {
      this.closeDelivered = true;
      this.toServer.length = 0;
      this.client.readyState = MemoryClientSocket.CLOSED;
      this.handlers?.onClose();
      this.client.onclose?.({ code: this.closeCode, reason: this.closeReason });
      delivered++;
    }
    return delivered;
  }

  get isClosed(): boolean {
    return this.closeDelivered;
  }
}

/** Many pairs; `flush()` runs until the whole network is quiet. */
export class MemoryNetwork {
  readonly pairs: MemorySocketPair[] = [];

  open(accept: (pair: MemorySocketPair) => void): MemorySocketPair {
    const pair = new MemorySocketPair();
    this.pairs.push(pair);
    accept(pair);
    return pair;
  }

  /** Drops closed pairs, which never move again (a fuzzer opens tens of thousands). */
  forgetClosed(): void {
    this.pairs.splice(0, this.pairs.length, ...this.pairs.filter((pair) => !pair.isClosed));
  }

  flush(maxRounds = 10_000): void {
    for (let round = 0; round < maxRounds; round++) {
      let moved = 0;
      for (const pair of this.pairs) moved += pair.flush();
      if (moved === 0) return;
    }
    throw new Error('network did not settle: a message loop between peers?');
  }
}
