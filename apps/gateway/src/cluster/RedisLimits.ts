import { Redis } from 'ioredis';
import type { Log } from '../core/ports/Log';
import { dayMs, hourMs, type SharedLimits } from '../core/limits/SharedLimits';

export interface RedisLimitsOptions {
  url: string;
  log: Log;
  /** Key prefix, so several clusters can share one Redis. */
  prefix?: string;
  /** How long a request waits for Redis before it is refused (fail closed). */
  timeoutMs?: number;
  /** How long spending is kept: the longest window `spent` is asked about, and more. */
  retentionMs?: number;
}

// Time comes from the Redis server (TIME), not from each gateway: their clocks may disagree.
// Scripts that write after TIME need effects replication, the default since Redis 5.
const now = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
`;

/** KEYS[1]: the bucket. ARGV: rate per second, capacity. Returns 1 when a request was taken. */
const takeScript = `${now}
local rate = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1])
local at = tonumber(state[2])
if tokens == nil or at == nil then tokens = capacity; at = now end
tokens = math.min(capacity, tokens + math.max(0, now - at) * rate / 1000)
local taken = 0
if tokens >= 1 then tokens = tokens - 1; taken = 1 end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
-- Untouched, the bucket is full again after this long, and a missing bucket is a full one.
if rate > 0 then redis.call('PEXPIRE', KEYS[1], math.max(1, math.ceil((capacity - tokens) * 1000 / rate))) end
return taken
`;

/** KEYS[1]: the usage hash (field: hour number). ARGV: tokens, hour length, retention. */
const spendScript = `${now}
local hourMs = tonumber(ARGV[2])
local hour = math.floor(now / hourMs)
local total = redis.call('HINCRBY', KEYS[1], tostring(hour), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
-- A new hour: forget those past the retention, so a key in constant use stays small.
if total == tonumber(ARGV[1]) then
  local forgotten = math.floor((now - tonumber(ARGV[3])) / hourMs)
  for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
    if tonumber(field) <= forgotten then redis.call('HDEL', KEYS[1], field) end
  end
end
return total
`;

/** KEYS[1]: the usage hash. ARGV: window, hour length. Returns the tokens of the hours the window reaches. */
const spentScript = `${now}
local oldest = math.floor((now - tonumber(ARGV[1])) / tonumber(ARGV[2]))
local entries = redis.call('HGETALL', KEYS[1])
local total = 0
for i = 1, #entries, 2 do
  if tonumber(entries[i]) > oldest then total = total + tonumber(entries[i + 1]) end
end
return total
`;

interface LimitCommands {
  flintLimitsTake(key: string, ratePerSecond: number, capacity: number): Promise<number>;
  flintLimitsSpend(key: string, tokens: number, hourMs: number, retentionMs: number): Promise<number>;
  flintLimitsSpent(key: string, windowMs: number, hourMs: number): Promise<number>;
}

/**
 * The agent's limits shared by every gateway of a cluster, in Redis: a link's sessions on several
 * gateways draw on one bucket and one budget. Each operation is one script (EVALSHA), so a
 * bucket is read and written atomically however many gateways take from it at once. Redis
 * unreachable or slower than `timeoutMs`: `take` and `spent` reject and the request is refused.
 */
export class RedisLimits implements SharedLimits {
  private readonly redis: Redis & LimitCommands;
  private readonly prefix: string;
  private readonly retentionMs: number;

  constructor(private readonly options: RedisLimitsOptions) {
    this.prefix = options.prefix ?? 'flint:';
    this.retentionMs = options.retentionMs ?? dayMs + hourMs;
    // commandTimeout also bounds a command queued while the connection is down.
    const redis = new Redis(options.url, { commandTimeout: options.timeoutMs ?? 1000, connectionName: 'flint-limits' });
    redis.on('error', (error: Error) => options.log('warn', `redis limits connection: ${error.message}`));
    redis.defineCommand('flintLimitsTake', { numberOfKeys: 1, lua: takeScript });
    redis.defineCommand('flintLimitsSpend', { numberOfKeys: 1, lua: spendScript });
    redis.defineCommand('flintLimitsSpent', { numberOfKeys: 1, lua: spentScript });
    this.redis = redis as Redis & LimitCommands;
  }

  async take(key: string, ratePerSecond: number, capacity: number): Promise<boolean> {
    return (await this.redis.flintLimitsTake(this.prefix + key, ratePerSecond, capacity)) === 1;
  }

  spend(key: string, tokens: number): void {
    const whole = Math.round(tokens);
    if (!(whole > 0)) return;
    this.redis.flintLimitsSpend(this.prefix + key, whole, hourMs, this.retentionMs).catch((error: unknown) => {
      // Spending already happened at the provider; what is lost here is only counted less.
      this.options.log('warn', 'could not count tokens spent in redis', { key, tokens, error: String(error) });
    });
  }

  async spent(key: string, windowMs: number): Promise<number> {
    return await this.redis.flintLimitsSpent(this.prefix + key, windowMs, hourMs);
  }

  async close(): Promise<void> {
    // QUIT waits for Redis; one that is gone will not answer, so the connection is just dropped.
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
