/** The OpenAI-compatible adapter's FIM endpoints on a loopback server, and their configuration. */
import { FakeFimServer, fakeFaults } from '@flint/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatCompletionsProvider } from '../ChatCompletionsProvider';
import { withCircuitBreaker } from '../CircuitBreaker';
import type { ModelEvent } from '../../core/ports/ModelProvider';
import { createProviders, loadProviderConfig, ProviderConfigError } from '../providerConfig';

async function drain(events: AsyncIterable<ModelEvent>): Promise<{ events: ModelEvent[]; text: string; error: unknown }> {
  const seen: ModelEvent[] = [];
  let text = '';
  try {
    for await (const event of events) {
      seen.push(event);
      if (event.type === 'text') text += event.text;
    }
  } catch (error) {
    return { events: seen, text, error };
  }
  return { events: seen, text, error: null };
}

describe('raw completion and infill over SSE', () => {
  let server: FakeFimServer;
  beforeAll(async () => {
    server = await FakeFimServer.start();
  });
  afterAll(async () => {
    await server.close();
  });

  it('completePrompt posts the raw prompt to /v1/completions and streams text, usage, done', async () => {
    server.respondOnceWith({ chunks: ['a + ', 'b;'], usage: { inputTokens: 30, outputTokens: 2, cachedInputTokens: 24 } });
    const provider = new ChatCompletionsProvider({ baseUrl: server.baseUrl, apiKey: 'k' });
    const { events, text, error } = await drain(provider.completePrompt({ model: 'qwen2.5-coder', prompt: '<|fim_prefix|>x<|fim_suffix|>y<|fim_middle|>', maxOutputTokens: 16, temperature: 0, stop: ['\n'] }, new AbortController().signal));
    await provider.close();
    expect(error).toBeNull();
    expect(text).toBe('a + b;');
    expect(events.slice(-2)).toEqual([
      { type: 'usage', inputTokens: 30, outputTokens: 2, cachedInputTokens: 24 },
      { type: 'done', finishReason: 'stop' },
    ]);
    const sent = server.requests.at(-1)!;
    expect(sent.path).toBe('/v1/completions');
    expect(sent.headers.authorization).toBe('Bearer k');
    expect(sent.body).toEqual({
      model: 'qwen2.5-coder',
      prompt: '<|fim_prefix|>x<|fim_suffix|>y<|fim_middle|>',
      stream: true,
      max_tokens: 16,
      stream_options: { include_usage: true },
      temperature: 0,
      stop: ['\n'],
    });
  });

  it('infill posts input_prefix, input_suffix and input_extra to /infill and reads llama-server events', async () => {
    server.respondOnceWith({ chunks: ['ret', 'urn 1;'], finishReason: 'length', usage: { inputTokens: 50, outputTokens: 2, cachedInputTokens: 40 } });
    const provider = new ChatCompletionsProvider({ baseUrl: server.baseUrl, infillUrl: server.infillUrl });
    const extra = [{ filename: 'b.ts', text: 'export const y = 1;' }];
    const { events, text, error } = await drain(provider.infill('function f() {\n  ', '\n}', { maxOutputTokens: 8, stop: ['\n\n'], extra }, new AbortController().signal));
    await provider.close();
    expect(error).toBeNull();
    expect(text).toBe('return 1;');
    expect(events.slice(-2)).toEqual([
      { type: 'usage', inputTokens: 50, outputTokens: 2, cachedInputTokens: 40 },
      { type: 'done', finishReason: 'length' },
    ]);
    expect(server.requests.at(-1)).toMatchObject({
      path: '/infill',
      body: { input_prefix: 'function f() {\n  ', input_suffix: '\n}', input_extra: extra, stream: true, n_predict: 8, cache_prompt: true, stop: ['\n\n'] },
    });
  });

  it('aborting mid-stream closes the upstream request', async () => {
    server.respondOnceWith({ text: 'x'.repeat(400), chunkChars: 1, delayMs: 5 });
    const provider = new ChatCompletionsProvider({ baseUrl: server.baseUrl });
    const controller = new AbortController();
    let received = 0;
    for await (const event of provider.completePrompt({ model: 'm', prompt: 'p', maxOutputTokens: 400 }, controller.signal)) {
      if (event.type === 'text' && ++received === 3) controller.abort();
    }
    await server.waitFor((s) => s.requests.at(-1)?.outcome === 'client-closed');
    await provider.close();
    expect(received).toBe(3);
  });

  it('errors are typed; infill without an endpoint is not_configured', async () => {
    server.respondOnceWith({ fault: fakeFaults.rateLimited({ retryAfterMs: 700 }) });
    const provider = new ChatCompletionsProvider({ baseUrl: server.baseUrl });
    const limited = await drain(provider.completePrompt({ model: 'm', prompt: 'p', maxOutputTokens: 4 }, new AbortController().signal));
    expect(limited.error).toMatchObject({ code: 'rate_limited', retryAfterMs: 700 });
    const missing = await drain(provider.infill('a', 'b', { maxOutputTokens: 4 }, new AbortController().signal));
    expect(missing.error).toMatchObject({ code: 'not_configured' });
    await provider.close();
  });

  it('the circuit breaker passes the FIM methods through, and only those the provider has', async () => {
    server.respondOnceWith({ text: 'ok' });
    const wrapped = withCircuitBreaker(new ChatCompletionsProvider({ baseUrl: server.baseUrl }), { clock: Date });
    expect(wrapped.completePrompt).toBeTypeOf('function');
    expect((await drain(wrapped.completePrompt!({ model: 'm', prompt: 'p', maxOutputTokens: 4 }, new AbortController().signal))).text).toBe('ok');
    const bare = withCircuitBreaker({ kind: 'x', close: async () => undefined, stream: async function* () {} }, { clock: Date });
    expect(bare.completePrompt).toBeUndefined();
    expect(bare.infill).toBeUndefined();
    await wrapped.close();
  });
});

describe('complete route configuration', () => {
  const chat = { FLINT_PROVIDER: 'openai-chat', OPENAI_BASE_URL: 'http://127.0.0.1:8080/v1' };

  it('takes the FIM template and the infill endpoint from the environment, for the complete route only', () => {
    const config = loadProviderConfig({ ...chat, FLINT_FIM_TEMPLATE: 'deepseek' });
    expect(config.routes.complete.fimTemplate).toBe('deepseek');
    expect(config.routes.fast.fimTemplate).toBeUndefined();
    const infill = loadProviderConfig({ ...chat, FLINT_INFILL_URL: 'http://127.0.0.1:8080/infill' });
    expect(infill.routes.complete).toMatchObject({ fimTemplate: 'infill', infillEndpoint: 'http://127.0.0.1:8080/infill' });
  });

  it('takes them from FLINT_CONFIG, and gives the infill route its own provider with /infill', () => {
    const file = JSON.stringify({ routes: { complete: { model: 'qwen2.5-coder-1.5b', infillEndpoint: 'http://127.0.0.1:8080/infill' } } });
    const config = loadProviderConfig(chat, file);
    expect(config.routes.complete).toMatchObject({ kind: 'openai-chat', fimTemplate: 'infill', model: 'qwen2.5-coder-1.5b' });
    const providers = createProviders(config, { clock: Date });
    expect(providers.complete).not.toBe(providers.fast);
    expect(providers.complete.infill).toBeTypeOf('function');
    void Promise.all(Object.values(providers).map((p) => p.close()));
  });

  it('refuses what cannot work, saying what to change', () => {
    expect(() => loadProviderConfig({ ...chat, FLINT_FIM_TEMPLATE: 'gpt' })).toThrow(ProviderConfigError);
    expect(() => loadProviderConfig({ FLINT_FIM_TEMPLATE: 'qwen' })).toThrow(/needs an OpenAI-compatible server/);
    expect(() => loadProviderConfig(chat, JSON.stringify({ routes: { complete: { fimTemplate: 'infill' } } }))).toThrow(/no infillEndpoint/);
    expect(() => loadProviderConfig({ ...chat, FLINT_INFILL_URL: 'not a url' })).toThrow(/not a URL/);
    // The embedded model fills natively; a chat prompt works anywhere.
    expect(loadProviderConfig({ FLINT_FIM_TEMPLATE: 'infill' }).routes.complete.kind).toBe('embedded');
    expect(loadProviderConfig({ OPENAI_API_KEY: 'k', FLINT_FIM_TEMPLATE: 'chat' }).routes.complete.kind).toBe('openai-responses');
  });
});
