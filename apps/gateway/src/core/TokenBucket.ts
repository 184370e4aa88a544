import type { Clock } from './ports/Clock';

/** Allows `ratePerSecond` on average with bursts up to `capacity`. */
export class TokenBucket {
  private tokens: number;
  private lastMs: number;

  constructor(
    private readonly clock: Clock,
    private readonly ratePerSecond: number,
    private readonly capacity: number,
  ) {
    this.tokens = capacity;
    this.lastMs = clock.now();
  }

  take(): boolean {
    const now = this.clock.now();
    this.tokens = Math.min(this.capacity, this.tokens + ((now - this.lastMs) * this.ratePerSecond) / 1000);
    this.lastMs = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
