import { describe, expect, it } from 'vitest';
import { FakeClock } from '@flint/test-kit';
import { CircuitBreaker, withCircuitBreaker } from './CircuitBreaker';
import { ProviderError, type ModelEvent, type ModelProvider, type ModelRequest } from '../core/ports/ModelProvider';
import { collectEvents } from '../../test/providerContract';
import type { Log } from '../core/ports/Log';
import { createProviders, loadProviderConfig } from './providerConfig';

const request: ModelRequest = { model: 'm', messages: [{ role: 'user', content: 'hi' }], maxOutputTokens: 8 };

/** 'ok', a failure before any event, or a failure after `tokens` text events (mid-stream). */
type Outcome = 'ok' | ProviderError | { tokens: number; error: ProviderError };

/** A provider whose next answers are scripted. */
function scriptedProvider(): ModelProvider & { next: Outcome[]; calls: number } {
  const provider = {
    kind: 'scripted',
    next: [] as Outcome[],
    calls: 0,
    close: async () => undefined,
    async *stream(): AsyncGenerator<ModelEvent, void, undefined> {
      provider.calls++;
      const outcome = provider.next.shift() ?? 'ok';
      if (outcome instanceof ProviderError) throw outcome;
      if (outcome !== 'ok') {
        for (let i = 0; i < outcome.tokens; i++) yield { type: 'text', text: 'x' };
        throw outcome.error;
      }
      yield { type: 'text', text: 'ok' };
      yield { type: 'done', finishReason: 'stop' };
    },
  };
  return provider;
}

const failure = (code: ProviderError['code'], retryAfterMs: number | null = null) => new ProviderError(code, code, retryAfterMs);
const midStream = (tokens: number, code: ProviderError['code'] = 'network') => ({ tokens, error: failure(code) });

describe('CircuitBreaker', () => {
  function setup(failureThreshold = 3, cooldownMs = 10_000) {
    const clock = new FakeClock();
    const inner = scriptedProvider();
    const provider = withCircuitBreaker(inner, { clock, failureThreshold, cooldownMs, host: 'api.cerebras.ai' });
    return { clock, inner, provider };
  }

  it('opens after K consecutive health failures and then fails fast without calling the provider', async () => {
    const { inner, provider } = setup();
    inner.next.push(failure('network'), failure('overloaded'), failure('bad_response'));
    for (let i = 0; i < 3; i++) expect(((await collectEvents(provider, request)).error as ProviderError).code).not.toBe('circuit_open');
    expect(provider.breaker.state).toBe('open');
    const { error } = await collectEvents(provider, request);
    expect(error).toMatchObject({ code: 'circuit_open', retryAfterMs: 10_000 });
    expect((error as ProviderError).message).toMatch(/api\.cerebras\.ai failed 3 times in a row; Flint stops asking it for 10 s/);
    expect(inner.calls).toBe(3);
  });

  it('counts failures after the first token too: drops, garbage and stalls mid-stream open it', async () => {
    const { inner, provider } = setup();
    inner.next.push(midStream(1), midStream(5, 'bad_response'), midStream(2));
    for (let i = 0; i < 3; i++) {
      const { text, error } = await collectEvents(provider, request);
      expect(text).not.toBe('');
      expect(error).toMatchObject({ code: expect.not.stringMatching('circuit_open') });
    }
    expect(provider.breaker.state).toBe('open');
    expect((await collectEvents(provider, request)).error).toMatchObject({ code: 'circuit_open' });
    expect(inner.calls).toBe(3);
  });

  it('counts down retryAfterMs with the clock while open', async () => {
    const { clock, inner, provider } = setup(1);
    inner.next.push(failure('network'));
    await collectEvents(provider, request);
    clock.advance(4_000);
    expect(provider.breaker.snapshot()).toEqual({ state: 'open', retryInMs: 6_000 });
    expect((await collectEvents(provider, request)).error).toMatchObject({ code: 'circuit_open', retryAfterMs: 6_000 });
  });

  it('does not count auth, context_length, quota or a rate limit that says when to retry', async () => {
    const { inner, provider } = setup(2);
    inner.next.push(failure('auth'), failure('context_length'), failure('quota'), failure('rate_limited', 500), failure('auth'));
    for (let i = 0; i < 5; i++) await collectEvents(provider, request);
    expect(provider.breaker.state).toBe('closed');
  });

  it('counts a rate limit without a retry hint', async () => {
    const { inner, provider } = setup(2);
    inner.next.push(failure('rate_limited'), failure('rate_limited'));
    for (let i = 0; i < 2; i++) await collectEvents(provider, request);
    expect(provider.breaker.state).toBe('open');
  });

  it('resets the count on a stream that ends well: only consecutive failures open it', async () => {
    const { inner, provider } = setup(2);
    inner.next.push(failure('network'), 'ok', midStream(3), 'ok', failure('network'));
    for (let i = 0; i < 5; i++) await collectEvents(provider, request);
    expect(provider.breaker.state).toBe('closed');
  });

  it('an answer that breaks off is no success: its first token does not reset the count', async () => {
    const { inner, provider } = setup(2);
    inner.next.push(failure('network'), midStream(1));
    for (let i = 0; i < 2; i++) await collectEvents(provider, request);
    expect(provider.breaker.state).toBe('open');
  });

  it('a consumer that stops after the answer started counts as a success (autocomplete stops early)', async () => {
    const { inner, provider } = setup(2);
    inner.next.push(failure('network'));
    await collectEvents(provider, request);
    const iterator = provider.stream(request, new AbortController().signal)[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toEqual({ type: 'text', text: 'ok' });
    await iterator.return!();
    inner.next.push(failure('network'));
    await collectEvents(provider, request);
    expect(provider.breaker).toMatchObject({ state: 'closed', consecutiveFailures: 1 });
  });

  it('half-opens after the cool-down and closes on a successful trial', async () => {
    const { clock, inner, provider } = setup(1);
    inner.next.push(failure('network'));
    await collectEvents(provider, request);
    clock.advance(10_000);
    expect(provider.breaker.snapshot()).toEqual({ state: 'half-open', retryInMs: 0 });
    const { text, error } = await collectEvents(provider, request);
    expect([text, error]).toEqual(['ok', null]);
    expect(provider.breaker.state).toBe('closed');
  });

  it('reopens for a full cool-down when the trial fails', async () => {
    const { clock, inner, provider } = setup(1);
    inner.next.push(failure('network'), failure('overloaded'));
    await collectEvents(provider, request);
    clock.advance(10_000);
    await collectEvents(provider, request);
    expect(provider.breaker.state).toBe('open');
    expect((await collectEvents(provider, request)).error).toMatchObject({ code: 'circuit_open', retryAfterMs: 10_000 });
  });

  it('a trial that answers lets others in at once, and reopens the circuit if it then breaks off', async () => {
    const { clock, inner, provider } = setup(2);
    inner.next.push(failure('network'), failure('network'));
    for (let i = 0; i < 2; i++) await collectEvents(provider, request);
    clock.advance(10_000);
    inner.next.push(midStream(2));
    const trial = provider.stream(request, new AbortController().signal)[Symbol.asyncIterator]();
    await trial.next();
    expect(provider.breaker.state).toBe('closed');
    await expect(trial.next().then(() => trial.next())).rejects.toMatchObject({ code: 'network' });
    expect(provider.breaker.snapshot()).toEqual({ state: 'open', retryInMs: 10_000 });
  });

  it('lets exactly one trial through while half-open', async () => {
    const clock = new FakeClock();
    const breaker = new CircuitBreaker({ clock, failureThreshold: 1, cooldownMs: 1_000 });
    breaker.onFailure(failure('network'));
    clock.advance(1_000);
    expect(breaker.admit()).toBeNull();
    expect(breaker.admit()).toBe(1_000);
    const provider = withCircuitBreaker(scriptedProvider(), { breaker, route: 'fast' });
    expect(((await collectEvents(provider, request)).error as ProviderError).message).toMatch(/failed 1 time in a row and one request is trying it again; Flint asks it again in 1 s/);
    breaker.onAbandon();
    expect(breaker.admit()).toBeNull();
  });

  it('an aborted trial neither closes nor reopens the circuit', async () => {
    const { clock, inner, provider } = setup(1);
    inner.next.push(failure('network'));
    await collectEvents(provider, request);
    clock.advance(10_000);
    const controller = new AbortController();
    controller.abort();
    await collectEvents(provider, request, controller.signal);
    expect(provider.breaker.state).toBe('half-open');
    expect((await collectEvents(provider, request)).error).toBeNull();
  });

  it('logs each failure as one warn line: route, host, status, request id, codes, tokens before it', async () => {
    const lines: Array<Parameters<Log>> = [];
    const inner = scriptedProvider();
    const breaker = new CircuitBreaker({ clock: new FakeClock(), failureThreshold: 2, host: 'api.cerebras.ai' });
    const provider = withCircuitBreaker(inner, { breaker, route: 'deep', log: (...line) => lines.push(line) });
    const dropped = new ProviderError('network', 'dropped', null, 'api.cerebras.ai').withRequestId('req_1');
    inner.next.push({ tokens: 3, error: dropped }, new ProviderError('overloaded', 'busy', null, 'api.cerebras.ai', { status: 503, requestId: 'req_2' }));
    for (let i = 0; i < 3; i++) await collectEvents(provider, request);
    // The third was refused by the breaker: no provider failure, no line.
    expect(lines).toEqual([
      ['warn', 'provider failed', { route: 'deep', host: 'api.cerebras.ai', status: null, requestId: 'req_1', code: 'network', providerCode: null, tokensBeforeFailure: 3, breaker: 'closed', consecutiveFailures: 1 }],
      ['warn', 'provider failed', { route: 'deep', host: 'api.cerebras.ai', status: 503, requestId: 'req_2', code: 'overloaded', providerCode: null, tokensBeforeFailure: 0, breaker: 'open', consecutiveFailures: 2 }],
    ]);
  });
});

describe('breakers per route: per endpoint and model', () => {
  function routesOn(fastUrl: string, deepUrl: string, deepModel = 'deep-model') {
    const clock = new FakeClock();
    const file = JSON.stringify({
      routes: { fast: { baseUrl: fastUrl, model: 'fast-model' }, deep: { baseUrl: deepUrl, model: deepModel }, complete: { kind: 'embedded' } },
      breaker: { failureThreshold: 2, cooldownMs: 30_000 },
    });
    return { clock, providers: createProviders(loadProviderConfig({ FLINT_PROVIDER: 'openai-chat', OPENAI_BASE_URL: fastUrl }, file), { clock }) };
  }

  it('two routes asking one endpoint for one model share its breaker; the refusal names the route that asked', () => {
    const { providers } = routesOn('https://api.cerebras.ai/v1', 'https://api.cerebras.ai/v1/', 'fast-model');
    expect(providers.fast.breaker).toBe(providers.deep.breaker);
    expect(providers.complete.breaker).not.toBe(providers.fast.breaker);
    for (let i = 0; i < 2; i++) providers.fast.breaker.onFailure(failure('network'));
    return collectEvents(providers.deep, request).then(({ error }) => {
      expect(error).toMatchObject({ code: 'circuit_open', retryAfterMs: 30_000 });
      expect((error as ProviderError).message).toBe(
        "The deep route's provider at api.cerebras.ai (shared with the fast route) failed 2 times in a row; Flint stops asking it for 30 s. Try again then.",
      );
    });
  });

  it('another model on the same endpoint keeps its own breaker, and the refusal offers its route', async () => {
    const { providers } = routesOn('https://api.cerebras.ai/v1', 'https://api.cerebras.ai/v1');
    expect(providers.fast.breaker).not.toBe(providers.deep.breaker);
    for (let i = 0; i < 2; i++) providers.fast.breaker.onFailure(failure('network'));
    expect(providers.deep.breaker.state).toBe('closed');
    expect(((await collectEvents(providers.fast, request)).error as ProviderError).message).toBe(
      "The fast route's provider at api.cerebras.ai failed 2 times in a row; Flint stops asking it for 30 s. Try again then, or switch to the deep route, which uses another model.",
    );
  });

  it('a route on another endpoint keeps its own breaker, and the refusal offers it while it is not open', async () => {
    const { providers } = routesOn('https://api.cerebras.ai/v1', 'https://api.groq.com/openai/v1');
    expect(providers.fast.breaker).not.toBe(providers.deep.breaker);
    for (let i = 0; i < 2; i++) providers.fast.breaker.onFailure(failure('network'));
    expect(providers.deep.breaker.state).toBe('closed');
    expect(((await collectEvents(providers.fast, request)).error as ProviderError).message).toBe(
      "The fast route's provider at api.cerebras.ai failed 2 times in a row; Flint stops asking it for 30 s. Try again then, or switch to the deep route, which uses another provider.",
    );
    for (let i = 0; i < 2; i++) providers.deep.breaker.onFailure(failure('network'));
    expect(((await collectEvents(providers.fast, request)).error as ProviderError).message).toMatch(/for 30 s\. Try again then\.$/);
  });

  it('tells ports apart: one host on two ports is two endpoints', () => {
    const { providers } = routesOn('http://127.0.0.1:8080/v1', 'http://127.0.0.1:8081/v1');
    expect(providers.fast.breaker).not.toBe(providers.deep.breaker);
    expect([providers.fast.breaker.host, providers.deep.breaker.host]).toEqual(['127.0.0.1:8080', '127.0.0.1:8081']);
  });
});
