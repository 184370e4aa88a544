import type { AgentErrorCode, AgentRoute, TurnInfo } from '@flint/protocol';
import { StreamingDiff } from '@flint/stream-diff';
import { ProviderError, type ModelProvider, type ModelRequest } from '../../models/ModelProvider';
import type { Clock, TimerHandle } from '../Clock';
import { CodeFenceFilter } from './CodeFenceFilter';
import type { EditApplier } from './EditApplier';

export interface TurnOptions {
  info: Omit<TurnInfo, 'status' | 'ttftMs' | 'outputTokens' | 'tokensPerSecond' | 'error'>;
  route: AgentRoute;
  provider: ModelProvider;
  request: ModelRequest;
  original: string;
  applier: EditApplier;
  clock: Clock;
  flushIntervalMs: number;
  /** Called on start, on each flush that changed something, and at the end. */
  onChange(info: TurnInfo): void;
  /** Called once with the tokens the turn used; returns false to stop the turn (budget spent). */
  onUsage(tokens: number): boolean;
  onEnd(info: TurnInfo): void;
}

/**
 * One generation streamed into a file. Text from the provider is buffered and applied once per
 * flush (every `flushIntervalMs`), never per token: push to the stream-diff, apply the ops it
 * commits as one Yjs transaction. Interrupting aborts the provider at once and keeps what was
 * applied; the original the stream had not reached stays in place.
 */
export class Turn {
  private info: TurnInfo;
  private readonly abort = new AbortController();
  private readonly diff: StreamingDiff;
  private readonly fences = new CodeFenceFilter();
  private buffer = '';
  private flushTimer: TimerHandle | null = null;
  private firstTokenAt: number | null = null;
  private ended = false;

  constructor(private readonly options: TurnOptions) {
    this.info = { ...options.info, status: 'streaming', ttftMs: null, outputTokens: 0, tokensPerSecond: null, error: null };
    this.diff = new StreamingDiff(options.original);
  }

  get snapshot(): TurnInfo {
    return this.info;
  }

  get turnId(): string {
    return this.info.turnId;
  }

  /** Runs the stream to its end; never rejects (failures become the turn's error). */
  async run(): Promise<void> {
    this.options.onChange(this.info);
    try {
      for await (const event of this.options.provider.stream(this.options.request, this.abort.signal)) {
        if (this.ended) break;
        if (event.type === 'text') {
          if (this.firstTokenAt === null) {
            this.firstTokenAt = this.options.clock.now();
            this.info = { ...this.info, ttftMs: this.firstTokenAt - this.info.startedAt };
          }
          this.info.outputTokens++;
          this.buffer += this.fences.push(event.text);
          this.scheduleFlush();
        } else if (event.type === 'usage') {
          this.info.outputTokens = event.outputTokens;
          if (!this.options.onUsage(event.inputTokens + event.outputTokens)) {
            return this.fail('budget_exceeded', 'This workspace has used its token budget for today.', null);
          }
        }
      }
      if (this.ended) return;
      this.buffer += this.fences.finish();
      this.flush(true);
      this.end('done');
    } catch (error) {
      if (error instanceof ProviderError) return this.fail(error.code, error.message, error.retryAfterMs);
      this.fail('internal', 'The gateway hit an internal error while streaming; what was written stays for review.', null);
      throw error;
    }
  }

  private scheduleFlush(): void {
    if (this.flushTimer !== null) return;
    this.flushTimer = this.options.clock.setTimeout(() => {
      this.flushTimer = null;
      this.flush(false);
    }, this.options.flushIntervalMs);
  }

  private flush(final: boolean): void {
    if (this.flushTimer !== null) {
      this.options.clock.clearTimeout(this.flushTimer);
      this.flushTimer = null;
    }
    const ops = this.buffer ? this.diff.push(this.buffer) : [];
    this.buffer = '';
    if (final) ops.push(...this.diff.finish());
    this.options.applier.apply(ops);
    if (final) this.options.applier.finish();
    const elapsedMs = this.firstTokenAt === null ? 0 : this.options.clock.now() - this.firstTokenAt;
    this.info = { ...this.info, tokensPerSecond: elapsedMs > 0 ? (this.info.outputTokens * 1000) / elapsedMs : null };
    if (!final) this.options.onChange(this.info);
  }

  /** Esc / Stop: abort upstream now; keep what was applied; leave the rest of the original. */
  cancel(): void {
    if (this.ended) return;
    this.abort.abort();
    // Text the diff has committed is applied; text it still holds back is dropped, so nothing
    // of the original the stream had not clearly passed is deleted.
    this.flushCommitted();
    this.end('cancelled');
  }

  private flushCommitted(): void {
    if (this.flushTimer !== null) this.options.clock.clearTimeout(this.flushTimer);
    this.flushTimer = null;
    this.options.applier.apply(this.buffer ? this.diff.push(this.buffer) : []);
    this.buffer = '';
    this.options.applier.finish();
  }

  private fail(code: AgentErrorCode, message: string, retryAfterMs: number | null): void {
    if (this.ended) return;
    this.abort.abort();
    this.flushCommitted();
    this.info = { ...this.info, error: { code, message, retryAfterMs } };
    this.end('failed');
  }

  private end(status: 'done' | 'cancelled' | 'failed'): void {
    this.ended = true;
    this.info = { ...this.info, status };
    this.options.onChange(this.info);
    this.options.onEnd(this.info);
  }
}
