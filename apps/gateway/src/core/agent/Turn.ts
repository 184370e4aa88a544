import type { AgentErrorCode, AgentRoute, TurnInfo } from '@flint/protocol';
import { StreamingDiff, type DiffOp } from '@flint/stream-diff';
import { ProviderError, type ModelProvider, type ModelRequest } from '../ports/ModelProvider';
import type { Clock, TimerHandle } from '../ports/Clock';
import { CodeFenceFilter } from './CodeFenceFilter';
import type { EditApplier } from './EditApplier';

/** How often a streaming turn's status is re-sent when its text did not move. */
const statusIntervalMs = 250;
/**
 * While text moves, the status (tokens, tokens/s for the HUD) goes out at most this often: a
 * JSON control message per 8 ms flush would cost every client a message it must parse and
 * process outside its per-frame batch of edits, ~125 times a second, for numbers no one reads
 * that fast. The text and the agent's cursor still go out with every flush.
 */
const liveStatusIntervalMs = 100;
export interface TurnOptions {
  info: Omit<TurnInfo, 'status' | 'ttftMs' | 'outputTokens' | 'tokensPerSecond' | 'error'>;
  route: AgentRoute;
  provider: ModelProvider;
  request: ModelRequest;
  original: string;
  applier: EditApplier;
  clock: Clock;
  flushIntervalMs: number;
  /** The status: on start, at most every 100 ms while streaming (250 ms when idle), and at the end. */
  onChange(info: TurnInfo): void;
  /** After each flush that changed the file: where the agent writes has moved. */
  onText(info: TurnInfo): void;
  /** Called once with the tokens the turn used; returns false to stop the turn (budget spent). */
  onUsage(tokens: number): boolean;
  onEnd(info: TurnInfo): void;
  /**
   * Whether this gateway may still write (in a cluster: the others still count it in). Asked
   * before each text the model sends: false ends the turn without it (`abandon`).
   */
  mayWrite?(): boolean;
}

/** What a turn says when its gateway finds the others took it for gone (frozen, or cut off). */
export const gatewayLapsedMessage =
  'The gateway running this turn stopped answering the others, which ended the turn. What it wrote before that is in the files for review.';

/**
 * One generation streamed into a file. Text from the provider is buffered and applied once per
 * flush (every `flushIntervalMs`), never per token: push to the stream-diff, apply the ops it
 * commits as one Yjs transaction. A stream that is interrupted (Esc) or fails mid-answer keeps
 * everything that arrived, as hunks for review; the original it had not reached stays in place.
 */
export class Turn {
  private info: TurnInfo;
  private generation: AbortController | null = null;
  private steered: ModelRequest | null = null;
  /** Everything the model said in this turn, across steers. */
  private streamed = '';
  private readonly diff: StreamingDiff;
  private fences = new CodeFenceFilter();
  private buffer = '';
  private flushTimer: TimerHandle | null = null;
  private firstTokenAt: number | null = null;
  private lastFlushAt = Number.NEGATIVE_INFINITY;
  private lastStatusAt = Number.NEGATIVE_INFINITY;
  private ended = false;
  /** The turn's first text was applied (see `flush`). */
  private textShown = false;
  /** Text given to the diff, and how much of it the diff has committed (keeps and inserts). */
  private pushed = '';
  private committed = 0;

  constructor(private readonly options: TurnOptions) {
    this.info = { ...options.info, status: 'streaming', ttftMs: null, outputTokens: 0, tokensPerSecond: null, error: null };
    // A small pending bound: a long one-line rewrite still shows up within ~a hundred
    // characters instead of waiting for its line break (stream-diff [D9]).
    this.diff = new StreamingDiff(options.original, { maxPending: 96 });
  }

  get snapshot(): TurnInfo {
    return this.info;
  }

  /**
   * What arrived but the diff has not committed yet (it waits to see how the text aligns with
   * the original: up to ~a hundred characters and a few lines, for as long as the stream takes).
   * Shown in place as provisional text, so every character is on screen within a flush at any
   * rate (decision 0020).
   */
  get provisional(): string {
    return this.ended ? '' : this.pushed.slice(this.committed);
  }

  get turnId(): string {
    return this.info.turnId;
  }

  /** Runs the stream to its end; never rejects (failures become the turn's error). */
  async run(): Promise<void> {
    let request: ModelRequest | null = this.options.request;
    let announced = false;
    try {
      while (request) {
        const generation = new AbortController();
        this.generation = generation;
        // The provider's request is built and handed to the socket synchronously, before the
        // first status goes to the room: the model's time to first token starts first, and the
        // request's write is queued ahead of the status frames (it leaves on the same tick).
        const consuming = this.consume(request, generation.signal);
        if (!announced) {
          announced = true;
          this.options.onChange(this.info);
        }
        await consuming;
        if (this.ended) return;
        request = this.steered;
        this.steered = null;
        // A steered generation starts a new answer: release what the fence filter held back.
        this.buffer += this.fences.finish();
        this.fences = new CodeFenceFilter();
      }
      this.flush(true);
      this.end('done');
    } catch (error) {
      if (error instanceof ProviderError) return this.fail(error.code, error.message, error.retryAfterMs);
      this.fail('internal', 'The gateway hit an internal error while streaming.', null);
      throw error;
    }
  }

  private async consume(request: ModelRequest, signal: AbortSignal): Promise<void> {
    for await (const event of this.options.provider.stream(request, signal)) {
      if (this.ended || signal.aborted) return;
      if (event.type === 'text') {
        if (this.options.mayWrite?.() === false) return this.abandon(gatewayLapsedMessage);
        if (this.firstTokenAt === null) {
          this.firstTokenAt = this.options.clock.now();
          this.info = { ...this.info, ttftMs: this.firstTokenAt - this.info.startedAt };
        }
        this.info.outputTokens += event.tokens ?? 1;
        this.streamed += event.text;
        this.buffer += this.fences.push(event.text);
        // Text the fence filter still holds is not text yet: flushing nothing would only use up
        // the leading edge, and the text it releases a token later would wait a whole interval.
        if (!this.buffer) continue;
        // Leading edge: the first text (and any text after a quiet spell) goes out at once;
        // an overdue flush runs here too, so a busy event loop that starves timers still
        // applies text every interval.
        if (this.options.clock.now() - this.lastFlushAt >= this.options.flushIntervalMs) this.flush(false);
        else this.scheduleFlush();
      } else if (event.type === 'usage') {
        if (!this.options.onUsage(event.inputTokens + event.outputTokens)) {
          this.fail('budget_exceeded', 'This workspace has used its token budget for today.', null);
          return;
        }
      }
    }
  }

  /**
   * Steer: end the current generation and continue this turn — same diff, same hunks — with
   * the partial output and the new instruction (no provider has a native steer we rely on).
   */
  steer(instruction: string): void {
    if (this.ended) return;
    this.steered = {
      ...this.options.request,
      messages: [
        ...this.options.request.messages,
        { role: 'assistant', content: this.streamed },
        {
          role: 'user',
          content: `Change of plan: ${instruction}\nContinue the replacement from exactly where your previous answer stopped. Output only the rest of the new text.`,
        },
      ],
      prediction: undefined,
    };
    this.info = { ...this.info, instruction: `${this.info.instruction} → ${instruction.slice(0, 200)}` };
    this.generation?.abort();
  }

  private dueInMs(): number {
    return this.lastFlushAt + this.options.flushIntervalMs - this.options.clock.now();
  }

  private scheduleFlush(): void {
    if (this.flushTimer !== null) return;
    this.flushTimer = this.options.clock.setTimeout(() => {
      this.flushTimer = null;
      this.flushBuffered();
    }, Math.max(0, this.dueInMs()));
  }

  /** A flush, unless there is nothing to apply: an empty one would use up the leading edge. */
  private flushBuffered(): void {
    if (this.ended || !this.buffer) return;
    if (this.options.mayWrite?.() === false) return this.abandon(gatewayLapsedMessage);
    this.flush(false);
  }

  private flush(final: boolean): void {
    if (this.flushTimer !== null) {
      this.options.clock.clearTimeout(this.flushTimer);
      this.flushTimer = null;
    }
    const now = this.options.clock.now();
    this.lastFlushAt = now;
    const provisionalBefore = this.provisional;
    const ops = this.buffer ? this.diff.push(this.buffer) : [];
    this.pushed += this.buffer;
    this.buffer = '';
    if (final) ops.push(...this.diff.finish());
    this.noteCommitted(ops);
    this.options.applier.apply(ops);
    if (final) this.options.applier.finish();
    const elapsedMs = this.firstTokenAt === null ? 0 : now - this.firstTokenAt;
    this.info = { ...this.info, tokensPerSecond: elapsedMs > 0 ? (this.info.outputTokens * 1000) / elapsedMs : null };
    if (final) return;
    const moved = ops.length > 0 || this.provisional !== provisionalBefore;
    if (!moved || this.textShown) return this.notify(moved, now);
    // The turn's first text leaves on its own: the frames sent in one turn of the event loop
    // leave as one write, and the agent's cursor and status would hold it back (~0.15 ms, B1).
    this.textShown = true;
    this.options.clock.afterIo(() => {
      if (!this.ended) this.notify(moved, now);
    });
  }

  private noteCommitted(ops: readonly DiffOp[]): void {
    for (const op of ops) {
      if (op.type === 'insert') this.committed += op.text.length;
      else if (op.type === 'keep') this.committed += op.length;
    }
    // Pushed text the diff committed is never needed again: keep only what is provisional.
    if (this.committed > 4096) {
      this.pushed = this.pushed.slice(this.committed);
      this.committed = 0;
    }
  }

  /** After a flush at `now`: the agent's cursor if the text moved; the status if it is due. */
  private notify(moved: boolean, now: number): void {
    if (moved) this.options.onText(this.info);
    // The first text's status goes out at once (time to first token shows); then a few times a second.
    if (now - this.lastStatusAt >= (moved ? liveStatusIntervalMs : statusIntervalMs)) {
      this.lastStatusAt = now;
      this.options.onChange(this.info);
    }
  }

  /** Esc / Stop: abort upstream now; keep what arrived; leave the rest of the original. */
  cancel(): void {
    if (this.ended) return;
    this.generation?.abort();
    this.flushInterrupted();
    this.end('cancelled');
  }

  /**
   * The file was deleted (or a folder it was in): abort upstream now and write nothing more,
   * since there is no document left to keep text in. Ends `cancelled`, like a Stop: someone
   * chose to end it, the model did not fail.
   */
  fileDeleted(): void {
    if (this.ended) return;
    this.generation?.abort();
    if (this.flushTimer !== null) this.options.clock.clearTimeout(this.flushTimer);
    this.flushTimer = null;
    this.buffer = '';
    this.end('cancelled');
  }

  /**
   * The others took this gateway for gone (it froze, or lost Redis past the liveness timeout)
   * and showed the turn failed: it writes nothing more — what arrived since is dropped, not
   * applied — closes its hunk for review and ends failed here too.
   */
  abandon(message: string): void {
    if (this.ended) return;
    this.generation?.abort();
    if (this.flushTimer !== null) this.options.clock.clearTimeout(this.flushTimer);
    this.flushTimer = null;
    this.buffer = '';
    try {
      this.options.applier.finish();
    } finally {
      this.info = { ...this.info, error: { code: 'internal', message, retryAfterMs: null } };
      this.end('failed');
    }
  }

  /**
   * Applies everything the provider sent before the stream stopped short: the buffer, what the
   * fence filter held (a line's `\n` waits there in case a closing fence follows) and what the
   * diff still held back, a trailing partial line included. The original past that text stays
   * (stream-diff [D19]): an answer that broke off never said to remove it.
   */
  private flushInterrupted(): void {
    if (this.flushTimer !== null) this.options.clock.clearTimeout(this.flushTimer);
    this.flushTimer = null;
    const text = this.buffer + this.fences.finish();
    this.buffer = '';
    const ops = text ? this.diff.push(text) : [];
    ops.push(...this.diff.finish({ keepRest: true }));
    this.options.applier.apply(ops);
    this.options.applier.finish();
  }

  /**
   * Ends the turn with `error`. Whatever arrived is applied first (see `flushInterrupted`); when
   * that left hunks, the message says so, since a half-written region looks like a finished one.
   */
  private fail(code: AgentErrorCode, message: string, retryAfterMs: number | null): void {
    if (this.ended) return;
    this.generation?.abort();
    let kept = '';
    try {
      this.flushInterrupted();
      if (this.options.applier.hunkIds.length > 0) kept = ' What it wrote before that is in the file for review; the rest of the original is unchanged.';
    } finally {
      // An applier that threw (a bug, rethrown by `run`) must not leave the turn streaming.
      this.info = { ...this.info, error: { code, message: message + kept, retryAfterMs } };
      this.end('failed');
    }
  }

  private end(status: 'done' | 'cancelled' | 'failed'): void {
    this.ended = true;
    this.info = { ...this.info, status };
    this.options.onChange(this.info);
    this.options.onEnd(this.info);
  }
}
