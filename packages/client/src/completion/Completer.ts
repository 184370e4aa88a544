/**
 * Ghost-text autocomplete for the typing user: when to ask, what to show, what to keep. Pure
 * logic over an injected completion source and timers; the editor tells it about edits and
 * cursor moves and renders `suggestion`.
 *
 * - Asks after an adaptive debounce (AdaptiveDebounce), at most one request in flight.
 * - Typing the characters a suggestion predicts keeps it (trimmed) and sends nothing; the same
 *   for an in-flight request whose streamed text so far agrees with what was typed. Anything
 *   else (a keystroke before anything streamed included) cancels the stale request at once and
 *   dismisses the suggestion.
 * - Remembers suggestions by place (CompletionCache): coming back to a spot shows it again.
 * - Backs off after failures that a retry at the next keystroke cannot fix.
 */
import type { CompletionOutcome } from '@flint/protocol';
import type { Timers } from '../WebSocketLike';
import { AdaptiveDebounce } from './AdaptiveDebounce';
import { CompletionCache } from './CompletionCache';
import type { CompletionResult, CompletionStream } from './CompletionChannel';

/** Where the cursor is and the text around it. */
export interface EditorState {
  fileId: string;
  /** The cursor offset in the file's text. */
  index: number;
  /** Text before the cursor: the same number of characters each time (or all of it). */
  prefix: string;
  /** Text after the cursor, likewise. */
  suffix: string;
  openFileIds: string[];
}

export interface Suggestion {
  requestId: number;
  fileId: string;
  /** Where the ghost text starts. */
  index: number;
  text: string;
}

export interface CompletionSource {
  request(state: EditorState): CompletionStream;
  feedback(requestId: number, outcome: CompletionOutcome, latencyMs: number): void;
}

export interface CompleterStats {
  requested: number;
  cancelled: number;
  /** Keystrokes that kept a suggestion alive without a request. */
  reused: number;
  cacheHits: number;
  shown: number;
  accepted: number;
  dismissed: number;
  failed: number;
  /** Keystroke to ghost text, of the last suggestion a request produced. */
  lastLatencyMs: number | null;
  /** Request to result on the gateway, of the last request. */
  lastProviderMs: number | null;
  model: string | null;
  /** A request is in flight. */
  running: boolean;
  /** Why suggestions stopped, for the status bar; null when they work. */
  problem: string | null;
}

export interface CompleterOptions {
  source: CompletionSource;
  timers: Timers;
  onSuggestion?: (suggestion: Suggestion | null) => void;
  onStats?: (stats: CompleterStats) => void;
  debounce?: AdaptiveDebounce;
  cache?: CompletionCache;
}

interface Flight {
  stream: CompletionStream;
  base: EditorState;
  /** The latest state while it runs, and what was typed since `base`. */
  current: EditorState;
  typed: string;
  startedAt: number;
}

/** Failures a retry cannot fix soon: wait this long before asking again. */
const backoffMs: Partial<Record<string, number>> = { not_configured: 300_000, auth: 300_000, quota: 300_000, forbidden: Infinity };

export class Completer {
  suggestion: Suggestion | null = null;
  readonly stats: CompleterStats = {
    requested: 0,
    cancelled: 0,
    reused: 0,
    cacheHits: 0,
    shown: 0,
    accepted: 0,
    dismissed: 0,
    failed: 0,
    lastLatencyMs: null,
    lastProviderMs: null,
    model: null,
    running: false,
    problem: null,
  };
  private enabled = true;
  /** The state the suggestion is relative to. */
  private anchor: EditorState | null = null;
  private flight: Flight | null = null;
  private timer: unknown = null;
  private pending: EditorState | null = null;
  private lastEditAt = 0;
  private pausedUntil = 0;
  private readonly acceptedIds = new Set<number>();
  private readonly debounce: AdaptiveDebounce;
  private readonly cache: CompletionCache;

  constructor(private readonly options: CompleterOptions) {
    this.debounce = options.debounce ?? new AdaptiveDebounce();
    this.cache = options.cache ?? new CompletionCache();
  }

  get isEnabled(): boolean {
    return this.enabled;
  }

  setEnabled(enabled: boolean): void {
    if (enabled === this.enabled) return;
    if (!enabled) this.reset('dismissed');
    this.enabled = enabled;
    this.emitStats();
  }

  /** The user changed the text (a keystroke, a paste, an accepted suggestion). */
  edited(state: EditorState): void {
    const now = this.options.timers.now();
    this.debounce.keystroke(now);
    this.lastEditAt = now;
    if (!this.enabled) return;
    if (this.suggestion && this.anchor) {
      const typed = typedSince(this.anchor, state);
      const text = this.suggestion.text;
      if (typed === '') return; // nothing changed at the cursor
      if (typed !== null && typed.length < text.length && text.startsWith(typed) && text.slice(typed.length).trim() !== '') {
        this.stats.reused++;
        this.show(this.suggestion.requestId, text.slice(typed.length), state, null);
        this.cache.set(state, { requestId: this.suggestion.requestId, text: this.suggestion.text });
        return;
      }
      // Typed something else (or all of it): this suggestion is over.
      this.clearSuggestion(typed !== null && typed === text ? null : 'dismissed');
    }
    if (this.flight) {
      const typed = typedSince(this.flight.base, state);
      // Only text already streamed can show the keystroke was predicted; before that it is stale.
      const received = this.flight.stream.received;
      if (typed !== null && received !== '' && agrees(received, typed)) {
        this.flight.current = state;
        this.flight.typed = typed;
        return;
      }
      this.cancelFlight();
    }
    this.schedule(state);
  }

  /**
   * The Tab key indented (or the user tabbed through the page into the editor and kept going):
   * not typing. Nothing is asked for it and what was shown is over, so the next Tab cannot
   * accept a suggestion the user never saw coming (VS Code: ghost text follows typing).
   */
  indented(): void {
    this.reset('dismissed');
  }

  /** The cursor moved without an edit: what was suggested here no longer applies. */
  cursorMoved(state: EditorState): void {
    const at = this.anchor ?? this.flight?.current ?? this.pending;
    if (at && at.fileId === state.fileId && at.index === state.index) return;
    this.reset('dismissed');
  }

  /** Tab (`all`) or Ctrl/Cmd-Right (`word`): the text to insert, or null when nothing is shown. */
  accept(part: 'all' | 'word'): string | null {
    const suggestion = this.suggestion;
    if (!suggestion) return null;
    if (!this.acceptedIds.has(suggestion.requestId)) {
      this.acceptedIds.add(suggestion.requestId);
      this.stats.accepted++;
      this.options.source.feedback(suggestion.requestId, 'accepted', 0);
    }
    const text = part === 'all' ? suggestion.text : nextWord(suggestion.text);
    // A partial accept keeps the rest: the insertion arrives as an edit that types its start.
    if (part === 'all' || text === suggestion.text) this.clearSuggestion(null);
    this.emitStats();
    return text;
  }

  /** Esc. */
  dismiss(): void {
    this.reset('dismissed');
  }

  dispose(): void {
    this.reset(null);
    this.enabled = false;
  }

  private reset(outcome: CompletionOutcome | null): void {
    this.clearTimer();
    this.cancelFlight();
    this.clearSuggestion(outcome);
  }

  private schedule(state: EditorState): void {
    this.clearTimer();
    const hit = this.cache.get(state);
    if (hit) {
      this.stats.cacheHits++;
      this.show(hit.requestId, hit.text, state, null);
      return;
    }
    if (this.options.timers.now() < this.pausedUntil) return;
    this.pending = state;
    this.timer = this.options.timers.setTimeout(() => this.fire(), this.debounce.delayMs());
  }

  private fire(): void {
    this.timer = null;
    const state = this.pending;
    this.pending = null;
    if (!state || !this.enabled) return;
    const stream = this.options.source.request(state);
    const flight: Flight = { stream, base: state, current: state, typed: '', startedAt: this.options.timers.now() };
    this.flight = flight;
    this.stats.requested++;
    this.stats.running = true;
    this.emitStats();
    stream.onDelta((received) => {
      // The model left what the user typed meanwhile: stale, ask again for where they are.
      if (this.flight === flight && flight.typed && !agrees(received, flight.typed)) {
        this.cancelFlight();
        this.schedule(flight.current);
      }
    });
    void stream.result.then((result) => this.finished(flight, result));
  }

  private finished(flight: Flight, result: CompletionResult): void {
    if (this.flight !== flight) return; // cancelled or superseded: already handled
    this.flight = null;
    this.stats.running = false;
    const now = this.options.timers.now();
    this.stats.lastProviderMs = result.latencyMs;
    if (result.model) this.stats.model = result.model;
    if (result.status === 'failed') {
      this.stats.failed++;
      const error = result.error;
      const wait = error ? (backoffMs[error.code] ?? (error.code === 'rate_limited' || error.code === 'circuit_open' ? (error.retryAfterMs ?? 2_000) : 0)) : 0;
      this.pausedUntil = now + wait;
      this.stats.problem = wait > 0 && error ? error.message : null;
      return this.emitStats();
    }
    this.stats.problem = null;
    if (result.status !== 'done') return this.emitStats();
    this.debounce.observeLatency(now - flight.startedAt);
    if (result.text) this.cache.set(flight.base, { requestId: flight.stream.requestId, text: result.text });
    const { typed, current } = flight;
    const rest = result.text.startsWith(typed) ? result.text.slice(typed.length) : '';
    if (rest.trim() === '') {
      // Nothing left to suggest where the user is now; ask again there if they moved on.
      if (typed) this.schedule(current);
      return this.emitStats();
    }
    if (typed) this.cache.set(current, { requestId: flight.stream.requestId, text: rest });
    this.show(flight.stream.requestId, rest, current, now - this.lastEditAt);
  }

  /** `latencyMs`: keystroke to ghost text, when a request (not reuse or cache) produced it. */
  private show(requestId: number, text: string, at: EditorState, latencyMs: number | null): void {
    const first = this.suggestion?.requestId !== requestId;
    this.anchor = at;
    this.suggestion = { requestId, fileId: at.fileId, index: at.index, text };
    if (latencyMs !== null) {
      this.stats.shown++;
      this.stats.lastLatencyMs = latencyMs;
      this.options.source.feedback(requestId, 'shown', latencyMs);
    } else if (first) this.stats.shown++;
    this.options.onSuggestion?.(this.suggestion);
    this.emitStats();
  }

  private clearSuggestion(outcome: CompletionOutcome | null): void {
    const suggestion = this.suggestion;
    this.anchor = null;
    if (!suggestion) return;
    this.suggestion = null;
    if (outcome === 'dismissed' && !this.acceptedIds.has(suggestion.requestId)) {
      this.stats.dismissed++;
      this.options.source.feedback(suggestion.requestId, 'dismissed', 0);
    }
    this.options.onSuggestion?.(null);
    this.emitStats();
  }

  private cancelFlight(): void {
    const flight = this.flight;
    if (!flight) return;
    this.flight = null;
    this.stats.cancelled++;
    this.stats.running = false;
    flight.stream.cancel();
    this.emitStats();
  }

  private clearTimer(): void {
    if (this.timer !== null) this.options.timers.clearTimeout(this.timer);
    this.timer = null;
    this.pending = null;
  }

  private emitStats(): void {
    this.options.onStats?.({ ...this.stats });
  }
}

/**
 * What the user typed going from `base` to `state`, when that is all that happened (same file,
 * cursor moved forward by what was inserted before it, text after it unchanged); else null.
 */
export function typedSince(base: EditorState, state: EditorState): string | null {
  if (state.fileId !== base.fileId) return null;
  const count = state.index - base.index;
  if (count < 0 || count > state.prefix.length) return null;
  const n = Math.min(base.suffix.length, state.suffix.length);
  if (base.suffix.slice(0, n) !== state.suffix.slice(0, n) || base.suffix.length !== state.suffix.length) return null;
  const typed = state.prefix.slice(state.prefix.length - count);
  return (base.prefix + typed).endsWith(state.prefix) ? typed : null;
}

/** Whether streamed text and typed text can still be the same prediction. */
function agrees(received: string, typed: string): boolean {
  return received.startsWith(typed) || typed.startsWith(received);
}

/** The next word of a suggestion, with the whitespace before it (Ctrl/Cmd-Right). */
export function nextWord(text: string): string {
  const match = /^\s*(?:[\w$]+|[^\w$\s]+)/.exec(text);
  return match && match[0].length > 0 ? match[0] : text.slice(0, 1);
}

/** A completion source over anything with FlintClient's completion methods. */
export function completionSourceOf(client: {
  complete(request: { fileId: string; index: number; openFileIds: string[] }): CompletionStream;
  completionFeedback(requestId: number, outcome: CompletionOutcome, latencyMs: number): void;
}): CompletionSource {
  return {
    request: (state) => client.complete({ fileId: state.fileId, index: state.index, openFileIds: state.openFileIds }),
    feedback: (requestId, outcome, latencyMs) => client.completionFeedback(requestId, outcome, latencyMs),
  };
}
