/**
 * How long to wait after a keystroke before asking for a completion. Not a fixed 350 ms: from
 * the user's typing rhythm and the provider's recent latency.
 *
 * - `gap`: moving average (α = 0.3) of the time between keystrokes, counting only gaps under
 *   `pauseMs` (a longer one is a pause, not rhythm).
 * - `latency`: moving average (α = 0.3) of request → result.
 * - If `latency + minMs ≤ gap`, the answer lands before the next keystroke would: ask after
 *   `minMs`, which only coalesces the few change events of one keystroke (auto-closed brackets,
 *   IME). With a fast model, ghost text then appears between keystrokes, as part of typing.
 * - Otherwise a request fired mid-burst would be stale before it returns: wait for a gap longer
 *   than the user's rhythm, `clamp(1.5 × gap, minMs, maxMs)`, which says they paused.
 *
 * Typing the predicted characters reuses the suggestion without any request, so the rule only
 * governs requests after the user left the prediction.
 */
export interface DebounceOptions {
  minMs?: number;
  maxMs?: number;
  /** Gaps longer than this are pauses, not typing rhythm. */
  pauseMs?: number;
  /** Assumed before anything was measured. */
  initialGapMs?: number;
  initialLatencyMs?: number;
}

const alpha = 0.3;

export class AdaptiveDebounce {
  private gap: number;
  private latency: number;
  private lastKeystroke: number | null = null;
  private readonly minMs: number;
  private readonly maxMs: number;
  private readonly pauseMs: number;

  constructor(options: DebounceOptions = {}) {
    this.minMs = options.minMs ?? 20;
    this.maxMs = options.maxMs ?? 300;
    this.pauseMs = options.pauseMs ?? 1_000;
    this.gap = options.initialGapMs ?? 180;
    // Flint is built for fast models: assume one until answers say otherwise, so the first
    // suggestions of a session are not held back by a pessimistic guess (bench B8).
    this.latency = options.initialLatencyMs ?? 100;
  }

  /** The typing rhythm and latency it currently assumes, for the HUD and tests. */
  get estimates(): { gapMs: number; latencyMs: number } {
    return { gapMs: this.gap, latencyMs: this.latency };
  }

  keystroke(atMs: number): void {
    if (this.lastKeystroke !== null) {
      const gap = atMs - this.lastKeystroke;
      if (gap > 0 && gap < this.pauseMs) this.gap += alpha * (gap - this.gap);
    }
    this.lastKeystroke = atMs;
  }

  /** A request answered after `ms` (request → result). */
  observeLatency(ms: number): void {
    if (Number.isFinite(ms) && ms >= 0) this.latency += alpha * (ms - this.latency);
  }

  delayMs(): number {
    if (this.latency + this.minMs <= this.gap) return this.minMs;
    return Math.round(Math.min(this.maxMs, Math.max(this.minMs, 1.5 * this.gap)));
  }
}
