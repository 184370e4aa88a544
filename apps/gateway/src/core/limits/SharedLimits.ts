/**
 * Where the agent's guardrails keep their counts: request rates (token buckets) and tokens spent
 * (hourly buckets). One gateway keeps them in memory (`LocalLimits`); several gateways share them
 * through Redis (`cluster/RedisLimits`), so a link that moves to another gateway brings its rate
 * and its spending along.
 *
 * A rejected promise means the counts could not be read: callers refuse the request (fail
 * closed) rather than let an outage lift every limit.
 */
export interface SharedLimits {
  /**
   * Takes one request from the bucket `key`, which refills at `ratePerSecond` up to `capacity`
   * (a fresh bucket is full). Resolves false when it is empty.
   */
  take(key: string, ratePerSecond: number, capacity: number): Promise<boolean>;
  /** Adds tokens spent now under `key`. Fire and forget: the implementation logs its own failures. */
  spend(key: string, tokens: number): void;
  /**
   * Tokens spent under `key` in the hourly buckets that `windowMs` reaches back into, the current
   * hour included (a window of one hour is the current clock hour; of a day, it and the 23 before).
   */
  spent(key: string, windowMs: number): Promise<number>;
}

export const hourMs = 3_600_000;
export const dayMs = 24 * hourMs;
