import type { Clock } from '../Clock';

const dayMs = 24 * 3600 * 1000;

/**
 * Tokens spent per key (a workspace, a link) over a rolling window (a day unless told), in hourly buckets. In memory:
 * a restart forgets spending, which errs toward letting people work (docs/ARCHITECTURE.md).
 */
export class UsageLedger {
  private readonly buckets = new Map<string, Map<number, number>>();

  constructor(
    private readonly clock: Clock,
    private readonly windowMs = dayMs,
  ) {}

  spent(key: string): number {
    const hours = this.buckets.get(key);
    if (!hours) return 0;
    const oldest = Math.floor((this.clock.now() - this.windowMs) / 3_600_000);
    let total = 0;
    for (const [hour, tokens] of hours) {
      if (hour <= oldest) hours.delete(hour);
      else total += tokens;
    }
    return total;
  }

  add(key: string, tokens: number): void {
    let hours = this.buckets.get(key);
    if (!hours) this.buckets.set(key, (hours = new Map()));
    const hour = Math.floor(this.clock.now() / 3_600_000);
    hours.set(hour, (hours.get(hour) ?? 0) + tokens);
  }
}
