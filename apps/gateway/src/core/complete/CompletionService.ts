/**
 * Autocomplete at keystroke speed (SPEC [P25]–[P29]). Reads the text around the cursor in the
 * gateway's own copy of the file, asks the complete route to fill the middle, streams the text
 * back to the one session that asked, stops the provider as soon as the suggestion's boundary
 * is reached, and answers with the post-processed suggestion. One completion in flight per
 * session: a newer request or a cancel aborts the provider request at once.
 */
import {
  encodeControl,
  FILE_TEXT_KEY,
  type CompletionError,
  type CompletionOutcome,
  type CompletionRequest,
  type CompletionStatus,
  type ServerMessage,
} from '@flint/protocol';
import { createInfiller, type Infiller } from './Infiller';
import { ProviderError } from '../ports/ModelProvider';
import type { ModelRouter } from '../agent/ModelRouter';
import { resolveContentPosition } from '../agent/resolveContentPosition';
import type { Clock } from '../ports/Clock';
import type { Log } from '../ports/Log';
import type { Metrics } from '../Metrics';
import type { Room } from '../Room';
import type { Subscriber } from '../Subscriber';
import { TokenBucket } from '../TokenBucket';
import { buildCompletionContext, type CompletionContext } from './completionPrompt';
import { CompletionCutter } from './CompletionCutter';
import type { OpenFile } from './relatedSnippets';
import { postProcess } from './postProcess';

export interface CompletionConfig {
  /** Requests per second per session on average, bursts up to twice that. Clients debounce well below. */
  requestsPerSecond: number;
  /** Open files scanned for snippets. */
  maxOpenFiles: number;
  singleLineMaxTokens: number;
  multiLineMaxTokens: number;
  maxLines: number;
  /** Prompt budget in tokens (capped by the model's window): small prompts are fast prompts. */
  promptTokens: number;
}

export const defaultCompletionConfig: CompletionConfig = {
  requestsPerSecond: 15,
  maxOpenFiles: 8,
  singleLineMaxTokens: 64,
  multiLineMaxTokens: 256,
  maxLines: 16,
  promptTokens: 2048,
};

interface Flight {
  readonly requestId: number;
  readonly controller: AbortController;
  readonly startedAt: number;
  readonly model: string;
  firstTokenAt: number | null;
  ended: boolean;
}

interface SessionState {
  flight: Flight | null;
  readonly bucket: TokenBucket;
  /** Recent suggestions this session was sent, and the feedback already counted for each. */
  readonly suggested: Map<number, Set<CompletionOutcome>>;
}

const rememberedSuggestions = 32;

export class CompletionService {
  private readonly sessions = new Map<Subscriber, SessionState>();
  private readonly config: CompletionConfig;

  constructor(
    private readonly clock: Clock,
    private readonly router: ModelRouter,
    private readonly metrics: Metrics,
    private readonly log: Log,
    config: Partial<CompletionConfig> = {},
  ) {
    this.config = { ...defaultCompletionConfig, ...config };
    metrics.describe('flint_completion_requests_total', 'Autocomplete requests received.');
    metrics.describe('flint_completion_results_total', 'Autocomplete answers by status: done, empty (no suggestion), cancelled, failed.');
    metrics.describe('flint_completion_errors_total', 'Failed autocomplete requests by typed code.');
    metrics.describe('flint_completion_feedback_total', 'What users did with suggestions, as their clients report: shown, accepted, dismissed.');
    metrics.describe('flint_completion_tokens_total', 'Output tokens spent on autocomplete.');
    const ms = [10, 25, 50, 75, 100, 150, 200, 300, 500, 1000, 2500];
    metrics.histogram('flint_completion_ttft_ms', ms, 'Autocomplete: request to the first token of the provider.');
    metrics.histogram('flint_completion_latency_ms', ms, 'Autocomplete: request to result on the gateway (provider time included).');
    metrics.histogram('flint_completion_ghost_latency_ms', ms, 'Autocomplete: keystroke to ghost text, as clients measure it.');
  }

  /** The session may write (the caller checked, [P29]). */
  handle(message: CompletionRequest, from: Subscriber, room: Room): void {
    switch (message.type) {
      case 'complete.request':
        return this.request(message, from, room);
      case 'complete.cancel': {
        const state = this.sessions.get(from);
        if (state?.flight?.requestId === message.requestId) this.end(from, state, state.flight, 'cancelled');
        return;
      }
      case 'complete.feedback':
        return this.feedback(message, from);
    }
  }

  /** The session is gone: its completion stops spending tokens. */
  sessionClosed(from: Subscriber): void {
    const state = this.sessions.get(from);
    if (state?.flight) this.end(from, state, state.flight, 'cancelled');
    this.sessions.delete(from);
  }

  private stateOf(from: Subscriber): SessionState {
    let state = this.sessions.get(from);
    if (!state) {
      const rate = this.config.requestsPerSecond;
      state = { flight: null, bucket: new TokenBucket(this.clock, rate, rate * 2), suggested: new Map() };
      this.sessions.set(from, state);
    }
    return state;
  }

  private request(message: Extract<CompletionRequest, { type: 'complete.request' }>, from: Subscriber, room: Room): void {
    const state = this.stateOf(from);
    this.metrics.inc('flint_completion_requests_total');
    if (state.flight) this.end(from, state, state.flight, 'cancelled');
    const routed = this.router('complete');
    const flight: Flight = {
      requestId: message.requestId,
      controller: new AbortController(),
      startedAt: this.clock.now(),
      model: routed?.model ?? '',
      firstTokenAt: null,
      ended: false,
    };
    const fail = (error: CompletionError) => this.end(from, state, flight, 'failed', error);
    if (!routed) {
      return fail({ code: 'not_configured', message: 'No model is configured for autocomplete (the complete route): set FLINT_MODEL_COMPLETE or a provider (see the README).', retryAfterMs: null });
    }
    if (!state.bucket.take()) {
      return fail({ code: 'rate_limited', message: 'Too many completion requests in a row.', retryAfterMs: 1000 });
    }
    const live = room.doc(message.fileId);
    const path = room.pathOf(message.fileId);
    if (!live || path === null) return fail({ code: 'not_found', message: 'That file no longer exists.', retryAfterMs: null });
    const text = live.doc.getText(FILE_TEXT_KEY);
    const cursor = resolveContentPosition(live.doc, message.position);
    if (cursor === null) return fail({ code: 'invalid_range', message: 'The cursor position is not in this file.', retryAfterMs: null });
    const window = Math.max(256, routed.contextTokens - this.config.multiLineMaxTokens - 64);
    const context = buildCompletionContext({
      path,
      text: text.toString(),
      cursor,
      openFiles: this.openFiles(room, message.fileId, message.openFileIds),
      promptTokens: Math.min(this.config.promptTokens, window),
      maxLines: this.config.maxLines,
    });
    state.flight = flight;
    const infiller = createInfiller(routed.provider, routed.model, routed.fimTemplate);
    void this.run(from, state, flight, infiller, context, `${room.workspace.id}:${message.fileId}`);
  }

  private openFiles(room: Room, fileId: string, ids: readonly string[]): OpenFile[] {
    const files: OpenFile[] = [];
    for (const id of new Set(ids)) {
      if (files.length >= this.config.maxOpenFiles) break;
      if (id === fileId) continue;
      const path = room.pathOf(id);
      const doc = path === null ? null : room.doc(id);
      if (path !== null && doc) files.push({ path, text: doc.doc.getText(FILE_TEXT_KEY).toString() });
    }
    return files;
  }

  private async run(from: Subscriber, state: SessionState, flight: Flight, infiller: Infiller, context: CompletionContext, threadId: string): Promise<void> {
    const { shape } = context;
    const cutter = new CompletionCutter(shape);
    const signal = flight.controller.signal;
    const settings = {
      maxOutputTokens: shape.singleLine ? this.config.singleLineMaxTokens : this.config.multiLineMaxTokens,
      // Servers stop on these themselves, a round trip sooner than our abort.
      stop: shape.singleLine ? ['\n'] : ['\n\n'],
      threadId,
    };
    try {
      for await (const event of infiller.infill(context.prompt, settings, signal)) {
        if (flight.ended) return;
        if (event.type === 'usage') this.metrics.inc('flint_completion_tokens_total', undefined, event.outputTokens);
        if (event.type !== 'text') continue;
        if (flight.firstTokenAt === null) {
          flight.firstTokenAt = this.clock.now();
          this.metrics.observe('flint_completion_ttft_ms', flight.firstTokenAt - flight.startedAt);
        }
        const settled = cutter.push(event.text);
        if (settled) this.send(from, { type: 'complete.delta', requestId: flight.requestId, text: settled });
        if (cutter.done) {
          // The suggestion is complete: stop paying for text nobody will see.
          flight.controller.abort();
          break;
        }
      }
    } catch (error) {
      if (flight.ended) return;
      if (error instanceof ProviderError) {
        return this.end(from, state, flight, 'failed', { code: error.code, message: error.message, retryAfterMs: error.retryAfterMs });
      }
      this.log('error', 'autocomplete failed unexpectedly', { requestId: flight.requestId, error: String(error) });
      return this.end(from, state, flight, 'failed', { code: 'internal', message: 'Autocomplete failed inside the gateway; it will retry at the next keystroke.', retryAfterMs: null });
    }
    if (flight.ended) return;
    const rest = cutter.finish();
    if (rest) this.send(from, { type: 'complete.delta', requestId: flight.requestId, text: rest });
    this.end(from, state, flight, 'done', null, postProcess(cutter.text, shape));
  }

  /** Sends the one result of a request and forgets it; idempotent. */
  private end(from: Subscriber, state: SessionState, flight: Flight, status: CompletionStatus, error: CompletionError | null = null, text = ''): void {
    if (flight.ended) return;
    flight.ended = true;
    if (state.flight === flight) state.flight = null;
    if (status !== 'done') flight.controller.abort();
    const latencyMs = status === 'done' ? this.clock.now() - flight.startedAt : null;
    this.send(from, { type: 'complete.result', requestId: flight.requestId, status, text, model: flight.model, latencyMs, error });
    this.metrics.inc('flint_completion_results_total', { status: status === 'done' && text === '' ? 'empty' : status });
    if (error) this.metrics.inc('flint_completion_errors_total', { code: error.code });
    if (latencyMs !== null) this.metrics.observe('flint_completion_latency_ms', latencyMs);
    if (status === 'done' && text !== '') {
      state.suggested.set(flight.requestId, new Set());
      if (state.suggested.size > rememberedSuggestions) state.suggested.delete(state.suggested.keys().next().value!);
    }
  }

  private feedback(message: Extract<CompletionRequest, { type: 'complete.feedback' }>, from: Subscriber): void {
    const counted = this.sessions.get(from)?.suggested.get(message.requestId);
    if (!counted || counted.has(message.outcome)) return;
    counted.add(message.outcome);
    this.metrics.inc('flint_completion_feedback_total', { outcome: message.outcome });
    if (message.outcome === 'shown') this.metrics.observe('flint_completion_ghost_latency_ms', Math.min(message.latencyMs, 60_000));
  }

  private send(to: Subscriber, message: ServerMessage): void {
    to.send(encodeControl(message));
  }
}
