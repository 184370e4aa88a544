/** The core's view of one WebSocket; the transport adapts `ws` (or an in-memory pair) to it. */
export interface PeerSocket {
  send(data: Uint8Array): void;
  close(code: number, reason: string): void;
  readonly isOpen: boolean;
  /** Bytes sent and not yet handed to the network (`ws.bufferedAmount`): a slow reader's backlog. */
  readonly bufferedBytes: number;
  /** The client's address, as the transport knows it (for per-address session caps); '' if none. */
  readonly remoteAddress?: string;
}

/** What the transport calls when the socket receives a frame or closes. */
export interface Connection {
  receive(data: Uint8Array): void;
  closed(): void;
  /** The socket's write buffer emptied after it had filled up ('drain'). */
  drained(): void;
}
