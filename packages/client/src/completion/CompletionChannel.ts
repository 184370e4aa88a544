import type { CompletionErrorCode, CompletionOutcome, CompletionRequest, CompletionStatus, ServerMessage } from '@flint/protocol';

export interface CompletionResult {
  status: CompletionStatus;
  /** The suggestion (done only); empty: none. */
  text: string;
  model: string;
  /** Request to result on the gateway. */
  latencyMs: number | null;
  error: { code: CompletionErrorCode | 'disconnected' | 'forbidden'; message: string; retryAfterMs: number | null } | null;
}

/** One in-flight completion ([P26]): provisional text as it streams, then one result. */
export interface CompletionStream {
  readonly requestId: number;
  /** The deltas so far, joined. The result's text is a prefix of it. */
  readonly received: string;
  /** Called with `received` after each delta. */
  onDelta(listener: (received: string) => void): void;
  readonly result: Promise<CompletionResult>;
  /** Stops it ([P27]); the result then says `cancelled`. */
  cancel(): void;
}

type CompletionMessage = Extract<ServerMessage, { type: 'complete.delta' | 'complete.result' }>;
type Outgoing = DistributiveOmit<CompletionRequest, never>;

interface Pending {
  received: string;
  listener: ((received: string) => void) | null;
  resolve: (result: CompletionResult) => void;
}

/**
 * The completion requests of one connection: sends them, routes their deltas and results, and
 * fails them when the socket drops. `send` returns false when nothing could be sent.
 */
export class CompletionChannel {
  private readonly pending = new Map<number, Pending>();

  constructor(
    private readonly send: (message: Outgoing) => boolean,
    private readonly nextRequestId: () => number,
  ) {}

  request(fileId: string, position: string, openFileIds: string[]): CompletionStream {
    const requestId = this.nextRequestId();
    let resolve!: (result: CompletionResult) => void;
    const result = new Promise<CompletionResult>((r) => (resolve = r));
    const entry: Pending = { received: '', listener: null, resolve };
    const stream: CompletionStream = {
      requestId,
      get received() {
        return entry.received;
      },
      onDelta: (listener) => (entry.listener = listener),
      result,
      cancel: () => {
        if (!this.pending.has(requestId)) return;
        this.send({ type: 'complete.cancel', requestId });
        this.settle(requestId, { status: 'cancelled', text: '', model: '', latencyMs: null, error: null });
      },
    };
    this.pending.set(requestId, entry);
    if (!this.send({ type: 'complete.request', requestId, fileId, position, openFileIds })) {
      this.settle(requestId, failure('disconnected', 'Not connected to the gateway.'));
    }
    return stream;
  }

  feedback(requestId: number, outcome: CompletionOutcome, latencyMs: number): void {
    this.send({ type: 'complete.feedback', requestId, outcome, latencyMs: Math.max(0, Math.round(latencyMs)) });
  }

  receive(message: CompletionMessage): void {
    const entry = this.pending.get(message.requestId);
    if (!entry) return; // cancelled here while the gateway was still answering
    if (message.type === 'complete.delta') {
      entry.received += message.text;
      entry.listener?.(entry.received);
      return;
    }
    this.settle(message.requestId, { status: message.status, text: message.text, model: message.model, latencyMs: message.latencyMs, error: message.error });
  }

  /** The socket closed: no answer will come for what is pending. */
  disconnected(): void {
    for (const requestId of [...this.pending.keys()]) {
      this.settle(requestId, failure('disconnected', 'The connection dropped before the gateway answered.'));
    }
  }

  private settle(requestId: number, result: CompletionResult): void {
    const entry = this.pending.get(requestId);
    if (!entry) return;
    this.pending.delete(requestId);
    entry.resolve(result);
  }
}

export function failure(code: NonNullable<CompletionResult['error']>['code'], message: string): CompletionResult {
  return { status: 'failed', text: '', model: '', latencyMs: null, error: { code, message, retryAfterMs: null } };
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
