/**
 * Decides when a running benchmark has hung. A smoke run proves a benchmark still works, so on a
 * busy machine it may take as long as it needs while it keeps finishing steps: it fails only when
 * it has been silent for `stallMs`, or has run past `limitMs` in all (the backstop that keeps CI
 * from hanging on a benchmark that reports progress but never ends). A full run has no stall
 * window: its steps are long by design, and only its overall limit applies.
 */
import type { Clock } from '@flint/gateway';

export interface WatchdogLimits {
  /** Fail when no step finished for this long; absent: only `limitMs` applies. */
  stallMs?: number;
  /** Fail when the benchmark has run this long, progressing or not. */
  limitMs: number;
}

export class ProgressWatchdog {
  /** Rejects with a sentence naming the benchmark once it stalls or overruns; never resolves. */
  readonly expired: Promise<never>;
  private readonly startedAt: number;
  private lastProgressAt: number;
  private lastStep = 'none yet';
  private longestGapMs = 0;
  private stallTimer: unknown;
  private limitTimer: unknown;
  private fail!: (error: Error) => void;

  constructor(
    private readonly name: string,
    private readonly limits: WatchdogLimits,
    private readonly clock: Pick<Clock, 'now' | 'setTimeout' | 'clearTimeout'>,
  ) {
    this.expired = new Promise<never>((_, reject) => (this.fail = reject));
    this.startedAt = this.lastProgressAt = clock.now();
    this.limitTimer = clock.setTimeout(() => this.overran(), limits.limitMs);
    if (limits.stallMs !== undefined) this.armStall(limits.stallMs);
  }

  /** A step finished (a sample, a page, a line logged): the stall window starts again. */
  progressed(step: string): void {
    const now = this.clock.now();
    this.longestGapMs = Math.max(this.longestGapMs, now - this.lastProgressAt);
    this.lastProgressAt = now;
    this.lastStep = step;
  }

  /** The longest time so far with no step finished, the present silence included: how close it came to stalling. */
  get longestSilenceMs(): number {
    return Math.max(this.longestGapMs, this.clock.now() - this.lastProgressAt);
  }

  dispose(): void {
    this.clock.clearTimeout(this.stallTimer);
    this.clock.clearTimeout(this.limitTimer);
  }

  // One timer for the window, re-armed when it fires, not on every step: a step is cheap to report.
  private armStall(delayMs: number): void {
    this.stallTimer = this.clock.setTimeout(() => {
      const stallMs = this.limits.stallMs!;
      const silentMs = this.clock.now() - this.lastProgressAt;
      if (silentMs < stallMs) return this.armStall(stallMs - silentMs);
      this.dispose();
      this.fail(
        new Error(
          `${this.name} made no progress for ${seconds(silentMs)} s (a smoke benchmark may be silent for ${seconds(stallMs)} s), ` +
            `${seconds(this.clock.now() - this.startedAt)} s after it started; its last step: ${this.lastStep}`,
        ),
      );
    }, delayMs);
  }

  private overran(): void {
    this.dispose();
    this.fail(new Error(`${this.name} did not finish within ${seconds(this.limits.limitMs)} s (last step: ${this.lastStep}, ${seconds(this.clock.now() - this.lastProgressAt)} s before)`));
  }
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(0);
}
