import type { Clock } from '../ports/Clock';
import { dayMs, hourMs, type SharedLimits } from './SharedLimits';

interface Bucket {
  tokens: number;
  atMs: number;
  /** When it is full again if untouched: from then on it is the same as no bucket. */
  fullAtMs: number;
}

/**
 * The limits of one gateway process, in memory, on the gateway's clock. A restart forgets them,
 * which errs toward letting people work (docs/ARCHITECTURE.md).
 */
export class LocalLimits implements SharedLimits {
  private readonly buckets = new Map<string, Bucket>();
  /** Tokens per key per hour (the hour's number since the epoch). */
  private readonly usage = new Map<string, Map<number, number>>();
  private sweepAtSize = 1024;

  constructor(
    private readonly clock: Clock,
    /** How long spending is kept: the longest window `spent` is asked about. */
    private readonly retentionMs = dayMs,
  ) {}

  take(key: string, ratePerSecond: number, capacity: number): Promise<boolean> {
    const now = this.clock.now();
    const bucket = this.buckets.get(key) ?? { tokens: capacity, atMs: now, fullAtMs: now };
    bucket.tokens = Math.min(capacity, bucket.tokens + (Math.max(0, now - bucket.atMs) * ratePerSecond) / 1000);
    bucket.atMs = now;
    const taken = bucket.tokens >= 1;
    if (taken) bucket.tokens -= 1;
    bucket.fullAtMs = now + ((capacity - bucket.tokens) * 1000) / ratePerSecond;
    this.buckets.set(key, bucket);
    if (this.buckets.size > this.sweepAtSize) this.sweep(now);
    return Promise.resolve(taken);
  }

  spend(key: string, tokens: number): void {
    let hours = this.usage.get(key);
    if (!hours) this.usage.set(key, (hours = new Map()));
    const hour = Math.floor(this.clock.now() / hourMs);
    hours.set(hour, (hours.get(hour) ?? 0) + tokens);
  }

  spent(key: string, windowMs: number): Promise<number> {
    const hours = this.usage.get(key);
    if (!hours) return Promise.resolve(0);
    const now = this.clock.now();
    const oldest = Math.floor((now - windowMs) / hourMs);
    const forgotten = Math.floor((now - this.retentionMs) / hourMs);
    let total = 0;
    for (const [hour, tokens] of hours) {
      if (hour <= forgotten) hours.delete(hour);
      else if (hour > oldest) total += tokens;
    }
    if (hours.size === 0) this.usage.delete(key);
    return Promise.resolve(total);
  }

  /** Forgets full buckets: one per link ever seen would otherwise stay for the life of the process. */
  private sweep(now: number): void {
    for (const [key, bucket] of this.buckets) if (bucket.fullAtMs <= now) this.buckets.delete(key);
    this.sweepAtSize = Math.max(1024, this.buckets.size * 2);
  }
}
