/**
 * Provider failures are visible and contained (issues #21, #31): the real gateway, real adapters,
 * and loopback fake providers. Mid-stream drops on the fast route's endpoint open its breaker;
 * the turn refused then says which route and which host; the deep route, on another endpoint or
 * asking the same endpoint for another model, still answers; every failure is one structured
 * warn line; /readyz's view and /metrics report each route's breaker.
 */
import type { TurnInfo } from '@flint/protocol';
import { FakeClock, FakeOpenAIServer, fakeFaults } from '@flint/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProviders, loadProviderConfig } from '../../models/providerConfig';
import { SqliteStore } from '../../storage/SqliteStore';
import type { Log } from '../ports/Log';
import { fileIdOf, Harness, untilRealIo } from '../../../test/testHarness';
import { readiness, type ModelRouter } from './ModelRouter';

let fastServer: FakeOpenAIServer;
let deepServer: FakeOpenAIServer;
beforeAll(async () => {
  [fastServer, deepServer] = await Promise.all([FakeOpenAIServer.start(), FakeOpenAIServer.start()]);
});
afterAll(() => Promise.all([fastServer.close(), deepServer.close()]));

function setup(fastIdleTimeoutMs = 30_000, routes?: Record<string, object>) {
  const lines: Array<Parameters<Log>> = [];
  const config = loadProviderConfig(
    {},
    JSON.stringify({
      routes: routes ?? {
        fast: { kind: 'openai-responses', baseUrl: fastServer.baseUrl, apiKey: 'test-key', transport: 'websocket', model: 'fast-model', idleTimeoutMs: fastIdleTimeoutMs },
        deep: { kind: 'openai-chat', baseUrl: deepServer.baseUrl, model: 'deep-model' },
        complete: { kind: 'openai-chat', baseUrl: deepServer.baseUrl, model: 'deep-model' },
      },
      // An hour: the fake clock moves 8 ms per look at the network, and must not reach a trial.
      breaker: { failureThreshold: 3, cooldownMs: 3_600_000 },
    }),
  );
  const clock = new FakeClock();
  const providers = createProviders(config, { clock, log: (...line) => lines.push(line) });
  const router: ModelRouter = (route) => ({
    provider: providers[route],
    model: config.routes[route].model,
    contextTokens: 128_000,
    supportsPrediction: false,
    endpoint: providers[route].breaker,
  });
  const h = new Harness(new SqliteStore(':memory:'), {}, router, clock);
  const ws = h.gateway.createWorkspace('Failures', { 'src/a.ts': 'const a = 1;\n' });
  const alice = h.client(ws.workspaceId, ws.owner.token);
  h.flush();
  const fileId = fileIdOf(alice, 'src/a.ts');
  const close = () => Promise.all([providers.fast.close(), providers.deep.close(), providers.complete.close()]);
  return { h, alice, fileId, lines, router, close };
}


/** Prompts on `route` and waits for the turn to end; returns how it ended. */
async function turnOn(ctx: ReturnType<typeof setup>, route: 'fast' | 'deep'): Promise<TurnInfo> {
  let answer: Awaited<ReturnType<typeof ctx.alice.prompt>> | null = null;
  void ctx.alice.prompt({ fileId: ctx.fileId, anchor: 0, head: 0, instruction: 'make it 2', route }).then((a) => (answer = a));
  await untilRealIo(ctx.h, () => answer !== null, 'the prompt to be answered');
  const accepted = answer as unknown as { ok: boolean; turnId?: string };
  if (!accepted.ok || !accepted.turnId) throw new Error(`prompt refused: ${JSON.stringify(answer)}`);
  const turnId = accepted.turnId;
  await untilRealIo(ctx.h, () => ['done', 'failed', 'cancelled'].includes(ctx.alice.turns.get(turnId)?.status ?? ''), 'the turn to end');
  return ctx.alice.turns.get(turnId)!;
}

describe('provider failures are visible and contained', () => {
  it('mid-stream drops open the fast endpoint’s breaker; the refusal names route and host; the deep route still answers', async () => {
    const ctx = setup();
    const fastHost = new URL(fastServer.baseUrl).host;
    fastServer.respondWith({ text: 'const a = 2;\n', chunkChars: 2, fault: fakeFaults.disconnect(2) });
    deepServer.respondWith({ text: 'const a = 2;\n' });

    const dropped: TurnInfo[] = [];
    for (let i = 0; i < 3; i++) dropped.push(await turnOn(ctx, 'fast'));
    for (const turn of dropped) {
      expect(turn).toMatchObject({ status: 'failed', error: { code: 'network' } });
      expect(turn.outputTokens).toBeGreaterThan(0);
    }
    const asked = fastServer.requests.length;

    const refused = await turnOn(ctx, 'fast');
    expect(refused).toMatchObject({ status: 'failed', outputTokens: 0, error: { code: 'circuit_open' } });
    expect(refused.error!.message).toMatch(
      new RegExp(`^The fast route's provider at ${fastHost} failed 3 times in a row; Flint stops asking it for \\d+ s\\. Try again then, or switch to the deep route, which uses another provider\\.$`),
    );
    expect(fastServer.requests.length).toBe(asked);

    const deep = await turnOn(ctx, 'deep');
    expect(deep).toMatchObject({ status: 'done', error: null });
    expect(deepServer.requests.length).toBeGreaterThan(0);

    const failures = ctx.lines.filter(([level, message]) => level === 'warn' && message === 'provider failed');
    expect(failures).toHaveLength(3);
    failures.forEach(([, , fields], i) => {
      expect(fields).toEqual({
        route: 'fast',
        host: fastHost,
        status: null,
        requestId: expect.stringMatching(/^resp_\d+$/),
        code: 'network',
        providerCode: null,
        tokensBeforeFailure: dropped[i]!.outputTokens,
        breaker: i < 2 ? 'closed' : 'open',
        consecutiveFailures: i + 1,
      });
    });
    expect(new Set(failures.map(([, , fields]) => fields!.requestId)).size).toBe(3);

    const view = readiness(ctx.router);
    expect(view.ready).toBe(false);
    expect(view.routes.fast).toMatchObject({ model: 'fast-model', host: fastHost, breaker: 'open', usable: false });
    expect(view.routes.deep).toMatchObject({ model: 'deep-model', host: new URL(deepServer.baseUrl).host, breaker: 'closed', retryInMs: 0, usable: true });
    await ctx.close();
  });

  it('garbage and a stall after the first token count like a drop', async () => {
    const ctx = setup(200);
    fastServer.respondWith({});
    fastServer.respondOnceWith({ text: 'const a = 2;\n', chunkChars: 2, fault: fakeFaults.garbage(2) });
    fastServer.respondOnceWith({ text: 'const a = 2;\n', chunkChars: 2, fault: fakeFaults.stall(2) });
    fastServer.respondOnceWith({ text: 'const a = 2;\n', chunkChars: 2, fault: fakeFaults.disconnect(2) });
    const ended = [];
    for (let i = 0; i < 4; i++) ended.push(await turnOn(ctx, 'fast'));
    expect(ended.map((turn) => [turn.error?.code, turn.outputTokens > 0])).toEqual([
      ['bad_response', true],
      ['network', true],
      ['network', true],
      ['circuit_open', false],
    ]);
    const failures = ctx.lines.filter(([, message]) => message === 'provider failed').map(([, , fields]) => fields);
    expect(failures.map((fields) => [fields!.code, fields!.tokensBeforeFailure])).toEqual(ended.slice(0, 3).map((turn) => [turn.error!.code, turn.outputTokens]));
    await ctx.close();
  });

  const faults = [
    ['a server error', fakeFaults.serverError(500), 'overloaded'],
    ['a mid-stream close', fakeFaults.disconnect(2), 'network'],
    ['garbage', fakeFaults.garbage(2), 'bad_response'],
    ['a stall', fakeFaults.stall(2), 'network'],
  ] as const;
  for (const [what, fault, code] of faults) {
    it(`${what} from the fast route's model opens only the fast route's breaker: the deep model on the same endpoint still answers`, async () => {
      const baseUrl = fastServer.baseUrl;
      const ctx = setup(undefined, {
        fast: { kind: 'openai-responses', baseUrl, apiKey: 'test-key', transport: 'websocket', model: 'fast-model', idleTimeoutMs: 200 },
        deep: { kind: 'openai-chat', baseUrl, model: 'deep-model' },
        complete: { kind: 'openai-chat', baseUrl, model: 'complete-model' },
      });
      const host = new URL(baseUrl).host;
      fastServer.respondWith({ text: 'const a = 2;\n' });
      fastServer.respondForModel('fast-model', { text: 'const a = 2;\n', chunkChars: 2, fault });

      for (let i = 0; i < 3; i++) expect(await turnOn(ctx, 'fast')).toMatchObject({ status: 'failed', error: { code } });
      const asked = fastServer.requests.length;
      expect(await turnOn(ctx, 'deep')).toMatchObject({ status: 'done', error: null });
      expect(fastServer.requests.slice(asked).map((r) => r.body.model)).toEqual(['deep-model']);

      const refused = await turnOn(ctx, 'fast');
      expect(refused).toMatchObject({ status: 'failed', outputTokens: 0, error: { code: 'circuit_open' } });
      expect(refused.error!.message).toMatch(
        new RegExp(`^The fast route's provider at ${host} failed 3 times in a row; Flint stops asking it for \\d+ s\\. Try again then, or switch to the deep route, which uses another model\\.$`),
      );

      const view = readiness(ctx.router);
      expect(view.ready).toBe(false);
      expect(view.routes.fast).toMatchObject({ model: 'fast-model', host, breaker: 'open', usable: false });
      expect(view.routes.deep).toMatchObject({ model: 'deep-model', host, breaker: 'closed', retryInMs: 0, usable: true });
      expect(view.routes.complete).toMatchObject({ model: 'complete-model', host, breaker: 'closed', usable: true });
      const metrics = ctx.h.gateway.metrics.render();
      expect(metrics).toContain('flint_route_breaker_state{route="fast",state="open"} 1');
      expect(metrics).toContain('flint_route_breaker_state{route="deep",state="closed"} 1');
      expect(metrics).toContain('flint_route_breaker_state{route="deep",state="open"} 0');
      await ctx.close();
    });
  }
});
