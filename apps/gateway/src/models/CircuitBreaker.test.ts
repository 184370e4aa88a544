import { describe, expect, it } from 'vitest';
import { FakeClock } from '@flint/test-kit';
import { CircuitBreaker, withCircuitBreaker } from './CircuitBreaker';
import { ProviderError, type ModelEvent, type ModelProvider, type ModelRequest } from './ModelProvider';
import { collectEvents } from './providerContract';

const request: ModelRequest = { model: 'm', messages: [{ role: 'user', content: 'hi' }], maxOutputTokens: 8 };

/** A provider whose next answers are scripted: an error code to throw, or 'ok'. */
function scriptedProvider(): ModelProvider & { next: Array<ProviderError | 'ok'>; calls: number } {
  const provider = {
    kind: 'scripted',
    next: [] as Array<ProviderError | 'ok'>,
    calls: 0,
    close: async () => undefined,
    async *stream(): AsyncGenerator<ModelEvent, void, undefined> {
      provider.calls++;
      const outcome = provider.next.shift() ?? 'ok';
      if (outcome !== 'ok') throw outcome;
      yield { type: 'text', text: 'ok' };
      yield { type: 'done', finishReason: 'stop' };
    },
  };
  return provider;
}

const failure = (code: ProviderError['code'], retryAfterMs: number | null = null) => new ProviderError(code, code, retryAfterMs);

describe('CircuitBreaker', () => {
  function setup(failureThreshold = 3, cooldownMs = 10_000) {
    const clock = new FakeClock();
    const inner = scriptedProvider();
    const provider = withCircuitBreaker(inner, { clock, failureThreshold, cooldownMs, name: 'cerebras' });
    return { clock, inner, provider };
  }

  it('opens after K consecutive health failures and then fails fast without calling the provider', async () => {
    const { inner, provider } = setup();
    inner.next.push(failure('network'), failure('overloaded'), failure('bad_response'));
    for (let i = 0; i < 3; i++) expect(((await collectEvents(provider, request)).error as ProviderError).code).not.toBe('circuit_open');
    expect(provider.breaker.state).toBe('open');
    const { error } = await collectEvents(provider, request);
    expect(error).toMatchObject({ code: 'circuit_open', retryAfterMs: 10_000 });
    expect((error as ProviderError).message).toMatch(/cerebras/);
    expect(inner.calls).toBe(3);
  });

  it('counts down retryAfterMs with the clock while open', async () => {
    const { clock, inner, provider } = setup(1);
    inner.next.push(failure('network'));
    await collectEvents(provider, request);
    clock.advance(4_000);
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

  it('resets the count on a success: only consecutive failures open it', async () => {
    const { inner, provider } = setup(2);
    inner.next.push(failure('network'), 'ok', failure('network'), 'ok');
    for (let i = 0; i < 4; i++) await collectEvents(provider, request);
    expect(provider.breaker.state).toBe('closed');
  });

  it('half-opens after the cool-down and closes on a successful trial', async () => {
    const { clock, inner, provider } = setup(1);
    inner.next.push(failure('network'));
    await collectEvents(provider, request);
    clock.advance(10_000);
    expect(provider.breaker.state).toBe('half-open');
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

  it('lets exactly one trial through while half-open', () => {
    const clock = new FakeClock();
    const breaker = new CircuitBreaker({ clock, failureThreshold: 1, cooldownMs: 1_000 });
    breaker.onFailure(failure('network'));
    clock.advance(1_000);
    breaker.admit();
    expect(() => breaker.admit()).toThrow(expect.objectContaining({ code: 'circuit_open', retryAfterMs: 1_000 }));
    breaker.onAbandon();
    expect(() => breaker.admit()).not.toThrow();
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
});
