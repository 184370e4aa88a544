/**
 * The agent's limits shared through a real Redis (a redis-server on loopback): what several
 * gateways see of one link's rate and spending. The contract part also runs on LocalLimits.
 */
import { Channel, decodeServerFrame, encodeControl, FILE_TEXT_KEY, INDEX_DOC_ID, INDEX_ENTRIES_KEY, isDecodeError, type IndexEntry, type ServerMessage } from '@flint/protocol';
import { FakeClock, freePort, MemoryNetwork, startRedis, type RunningService } from '@flint/test-kit';
import { Redis } from 'ioredis';
import { toBase64 } from 'lib0/buffer';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import * as Y from 'yjs';
import type { ModelRouter } from '../core/agent/ModelRouter';
import { ScriptedProvider } from '../../test/ScriptedProvider';
import type { Gateway } from '../core/Gateway';
import { createGateway } from '../index';
import { defaultConfig } from '../core/GatewayConfig';
import type { Log } from '../core/ports/Log';
import { LocalLimits } from '../core/limits/LocalLimits';
import { dayMs, hourMs, type SharedLimits } from '../core/limits/SharedLimits';
import { hello } from '../../test/testHarness';
import { SqliteStore } from '../storage/SqliteStore';
import { systemClock } from '../transport/systemClock';
import { systemRandom } from '../transport/systemRandom';
import { RedisLimits, type RedisLimitsOptions } from './RedisLimits';

let redis: RunningService;
let raw: Redis;
const cleanups: Array<() => Promise<void> | void> = [];
const logged: string[] = [];
const log: Log = (level, message) => void logged.push(`${level}: ${message}`);
let prefixes = 0;

beforeAll(async () => {
  redis = await startRedis();
  raw = new Redis(redis.url);
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  raw.disconnect();
  await redis.stop();
});

/** A gateway's RedisLimits; each test has its own prefix, so tests share nothing. */
function redisLimits(prefix: string, options: Partial<RedisLimitsOptions> = {}): RedisLimits {
  const limits = new RedisLimits({ url: redis.url, log, prefix, ...options });
  cleanups.push(() => limits.close());
  return limits;
}

const freshPrefix = () => `test${++prefixes}:`;

/** Milliseconds on the Redis server's clock, the one the scripts use. */
async function serverMs(): Promise<number> {
  const [seconds, micros] = await raw.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

const implementations: Array<[string, () => SharedLimits]> = [
  ['LocalLimits', () => new LocalLimits(new FakeClock())],
  ['RedisLimits', () => redisLimits(freshPrefix())],
];

describe.each(implementations)('SharedLimits contract: %s', (_name, make) => {
  it('a fresh bucket allows its capacity, then refuses; each key has its own bucket', async () => {
    const limits = make();
    const takes = await Promise.all(Array.from({ length: 5 }, () => limits.take('rate:l1', 0.001, 3)));
    expect(takes.filter(Boolean)).toHaveLength(3);
    expect(await limits.take('rate:l2', 0.001, 3)).toBe(true);
  });

  it('spending adds up per key, in the current hour and the day; a key never spent has spent nothing', async () => {
    const limits = make();
    limits.spend('tokens:w1', 120);
    limits.spend('tokens:w1', 30);
    limits.spend('tokens:w2', 7);
    expect(await limits.spent('tokens:w1', hourMs)).toBe(150);
    expect(await limits.spent('tokens:w1', dayMs)).toBe(150);
    expect(await limits.spent('tokens:w2', dayMs)).toBe(7);
    expect(await limits.spent('tokens:nobody', dayMs)).toBe(0);
  });
});

describe('RedisLimits across gateways', () => {
  it('two gateways draw on one bucket at once: together they get exactly its capacity', async () => {
    const prefix = freshPrefix();
    const [a, b] = [redisLimits(prefix), redisLimits(prefix)];
    const takes = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).take('rate:link', 0.001, 7)));
    expect(takes.filter(Boolean)).toHaveLength(7);
    // Untouched, a bucket is gone once it would be full again: no key per link stays forever.
    const ttl = await raw.pttl(`${prefix}rate:link`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(7_000_000);
  });

  it('over time, all the admits of both gateways stay within capacity + rate × elapsed', async () => {
    const prefix = freshPrefix();
    const [a, b] = [redisLimits(prefix), redisLimits(prefix)];
    const rate = 40;
    const capacity = 5;
    const startedMs = await serverMs();
    const until = Date.now() + 300;
    let admitted = 0;
    // Four takers per gateway, each as fast as Redis answers.
    await Promise.all(
      [a, a, a, a, b, b, b, b].map(async (limits) => {
        while (Date.now() < until) if (await limits.take('rate:link', rate, capacity)) admitted++;
      }),
    );
    const elapsedMs = (await serverMs()) - startedMs;
    expect(admitted).toBeLessThanOrEqual(capacity + Math.floor((rate * elapsedMs) / 1000));
    expect(admitted).toBeGreaterThan(capacity); // it refilled meanwhile
  });

  it('spending on two gateways adds up, and both see the sum', async () => {
    const prefix = freshPrefix();
    const [a, b] = [redisLimits(prefix), redisLimits(prefix)];
    a.spend('tokens:link', 100);
    b.spend('tokens:link', 250);
    // Fire and forget, on two connections: wait until both have landed.
    await vi.waitFor(async () => expect(await a.spent('tokens:link', dayMs)).toBe(350));
    expect(await b.spent('tokens:link', dayMs)).toBe(350);
  });

  it('a window reaches back over whole hours of the server\'s clock; hours past the retention are dropped, and the key expires', async () => {
    const prefix = freshPrefix();
    const limits = redisLimits(prefix);
    const key = `${prefix}tokens:w`;
    const hour = Math.floor((await serverMs()) / hourMs);
    // Spending from earlier hours, as gateways wrote it then.
    await raw.hincrby(key, String(hour - 2), 40);
    await raw.hincrby(key, String(hour - 30), 7);
    expect(await limits.spent('tokens:w', dayMs)).toBe(40);
    expect(await limits.spent('tokens:w', hourMs)).toBe(0);
    limits.spend('tokens:w', 5);
    expect(await limits.spent('tokens:w', hourMs)).toBe(5);
    expect(await limits.spent('tokens:w', dayMs)).toBe(45);
    expect(await raw.hexists(key, String(hour - 30))).toBe(0);
    const ttl = await raw.pttl(key);
    expect(ttl).toBeGreaterThan(dayMs);
    expect(ttl).toBeLessThanOrEqual(dayMs + hourMs);
  });

  it('Redis unreachable: take and spent reject within the timeout, and spending is logged as lost', async () => {
    const limits = redisLimits(freshPrefix(), { url: `redis://127.0.0.1:${await freePort()}`, timeoutMs: 100 });
    await expect(limits.take('rate:link', 1, 1)).rejects.toThrow(/timed out/);
    await expect(limits.spent('tokens:link', dayMs)).rejects.toThrow(/timed out/);
    logged.length = 0;
    limits.spend('tokens:link', 10);
    await vi.waitFor(() => expect(logged).toContain('warn: could not count tokens spent in redis'));
  });
});

/** A hand-written session on `gateway`, its frames delivered as it waits for answers. */
function session(gateway: Gateway, workspaceId: string, token: string) {
  const net = new MemoryNetwork();
  const pair = net.open((opened) => {
    const connection = gateway.connect(opened.server);
    opened.accept({ onMessage: (data) => connection.receive(data), onClose: () => connection.closed(), onDrain: () => connection.drained() });
  });
  const results = new Map<number, Extract<ServerMessage, { type: 'result' }>>();
  pair.client.onmessage = (event) => {
    const frame = decodeServerFrame(new Uint8Array(event.data as ArrayBuffer));
    if (!isDecodeError(frame) && frame.channel === Channel.Control && frame.message.type === 'result') results.set(frame.message.requestId, frame.message);
  };
  hello(pair, workspaceId, token);
  net.flush();
  let requestId = 0;
  /** Sends a request and waits for its answer, which comes once Redis has answered. */
  const request = async (message: Record<string, unknown>) => {
    const id = ++requestId;
    pair.client.send(encodeControl({ ...message, requestId: id } as Parameters<typeof encodeControl>[0]));
    const deadline = Date.now() + 5_000;
    while (!results.has(id) && Date.now() < deadline) {
      net.flush();
      await new Promise((resolve) => setImmediate(resolve));
    }
    return results.get(id);
  };
  // The file's first line: a position at the start of its text.
  const start = toBase64(Y.encodeRelativePosition(Y.createRelativePositionFromJSON({ tname: FILE_TEXT_KEY, assoc: -1 })));
  const prompt = (fileId: string) => request({ type: 'agent.prompt', fileId, anchor: start, head: start, instruction: 'comment it', route: 'fast' });
  return { request, prompt };
}

/** Gateways on one store (the cluster's shared database), each with its own RedisLimits. */
function cluster(count: number, promptsPerMinute: number, limitsOptions: Partial<RedisLimitsOptions> = {}) {
  const store = new SqliteStore(':memory:');
  const provider = new ScriptedProvider();
  const models: ModelRouter = () => ({ provider, model: 'spark-test', contextTokens: 32_000, supportsPrediction: false });
  const prefix = freshPrefix();
  const config = { agent: { ...defaultConfig.agent, promptsPerMinute } };
  const gateways = Array.from({ length: count }, () => createGateway(config, { store, clock: systemClock, random: systemRandom, models, log, limits: redisLimits(prefix, limitsOptions) }));
  cleanups.push(() => {
    for (const gateway of gateways) gateway.shutdown();
  });
  const ws = gateways[0]!.createWorkspace('Cluster', { 'a.ts': 'a\n', 'b.ts': 'b\n', 'c.ts': 'c\n' });
  const index = gateways[0]!.document(ws.workspaceId, INDEX_DOC_ID)!.getMap<IndexEntry>(INDEX_ENTRIES_KEY);
  const fileId = (path: string) => {
    const entry = index.get(path);
    if (entry?.kind !== 'file') throw new Error(`no file at ${path}`);
    return entry.fileId;
  };
  return { gateways, ws, provider, fileId };
}

describe('gateways sharing RedisLimits', () => {
  it('a link that used its rate on gateway A is refused on gateway B; another link is not', async () => {
    const { gateways, ws, fileId } = cluster(2, 1); // one prompt, then one a minute
    const [a, b] = gateways;
    const editor = a!.links.create(ws.workspaceId, 'editor', 'Editor', null);
    expect(await session(a!, ws.workspaceId, ws.owner.token).prompt(fileId('a.ts'))).toMatchObject({ ok: true });
    expect(await session(b!, ws.workspaceId, ws.owner.token).prompt(fileId('b.ts'))).toMatchObject({ ok: false, code: 'rate_limited' });
    expect(await session(b!, ws.workspaceId, editor.token).prompt(fileId('c.ts'))).toMatchObject({ ok: true });
  });

  it('a Stop sent right behind a thread message stops the turn it starts, though admission waits for Redis', async () => {
    const { gateways, ws } = cluster(1, 30);
    const alice = session(gateways[0]!, ws.workspaceId, ws.owner.token);
    const sent = alice.request({ type: 'thread.send', text: 'write tests', route: 'fast', mode: 'send', context: { mentions: [] } });
    const stopped = alice.request({ type: 'thread.stop' });
    const [message, stop] = await Promise.all([sent, stopped]);
    expect(message).toMatchObject({ ok: true, turnId: expect.any(String) });
    expect(stop).toMatchObject({ ok: true, turnId: message?.ok ? message.turnId : '' });
  });

  it('Redis unreachable: a prompt is refused as rate_limited, saying why, and the model is not asked', async () => {
    const { gateways, ws, fileId, provider } = cluster(1, 30, { url: `redis://127.0.0.1:${await freePort()}`, timeoutMs: 100 });
    const answer = await session(gateways[0]!, ws.workspaceId, ws.owner.token).prompt(fileId('a.ts'));
    expect(answer).toMatchObject({ ok: false, code: 'rate_limited', message: expect.stringMatching(/cannot reach the service that keeps the agent's limits/) });
    expect(provider.requests).toHaveLength(0);
    expect(logged).toContain('warn: refused a request to the agent: the shared limits did not answer');
  });
});
