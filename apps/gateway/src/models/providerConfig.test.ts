import { describe, expect, it } from 'vitest';
import type { ModelProvider } from '../core/ports/ModelProvider';
import { collectEvents } from '../../test/providerContract';
import { createProviders, describeProviderConfig, loadProviderConfig, openAIBaseUrl, ProviderConfigError } from './providerConfig';

describe('loadProviderConfig', () => {
  it('uses the embedded model everywhere when nothing is configured', () => {
    const config = loadProviderConfig({});
    for (const route of ['fast', 'deep', 'complete'] as const) {
      expect(config.routes[route]).toMatchObject({ kind: 'embedded', baseUrl: null, apiKey: null, model: 'default' });
    }
  });

  it('uses the OpenAI Responses API with OPENAI_API_KEY and no base URL', () => {
    const config = loadProviderConfig({ OPENAI_API_KEY: 'sk-abc' });
    expect(config.routes.fast).toMatchObject({ kind: 'openai-responses', baseUrl: openAIBaseUrl, apiKey: 'sk-abc', supportsPrediction: false });
    expect(config.routes.deep.model).not.toBe('');
  });

  it('uses Chat Completions at OPENAI_BASE_URL, with or without a key', () => {
    const local = loadProviderConfig({ OPENAI_BASE_URL: 'http://127.0.0.1:8080/v1' });
    expect(local.routes.fast).toMatchObject({ kind: 'openai-chat', baseUrl: 'http://127.0.0.1:8080/v1', apiKey: null, supportsPrediction: false });
    const cerebras = loadProviderConfig({ OPENAI_BASE_URL: 'https://api.cerebras.ai/v1', OPENAI_API_KEY: 'csk-1' });
    expect(cerebras.routes.complete).toMatchObject({ kind: 'openai-chat', apiKey: 'csk-1' });
  });

  it('takes models per route, deep and complete defaulting to the fast model', () => {
    const config = loadProviderConfig({ OPENAI_BASE_URL: 'https://api.groq.com/openai/v1', FLINT_MODEL_FAST: 'gpt-oss-120b', FLINT_MODEL_COMPLETE: 'qwen-coder' });
    expect([config.routes.fast.model, config.routes.deep.model, config.routes.complete.model]).toEqual(['gpt-oss-120b', 'gpt-oss-120b', 'qwen-coder']);
  });

  it('lets FLINT_PROVIDER choose the kind, and rejects an unknown one', () => {
    expect(loadProviderConfig({ OPENAI_API_KEY: 'sk', FLINT_PROVIDER: 'embedded' }).routes.fast.kind).toBe('embedded');
    expect(loadProviderConfig({ OPENAI_API_KEY: 'sk', FLINT_PROVIDER: 'openai-chat' }).routes.fast).toMatchObject({ kind: 'openai-chat', baseUrl: openAIBaseUrl, supportsPrediction: true });
    expect(() => loadProviderConfig({ FLINT_PROVIDER: 'anthropic' })).toThrow(ProviderConfigError);
  });

  it('refuses the Responses API without a key', () => {
    expect(() => loadProviderConfig({ FLINT_PROVIDER: 'openai-responses' })).toThrow(/OPENAI_API_KEY/);
  });

  it('lets the config file set providers per route, with keys from named environment variables', () => {
    const file = JSON.stringify({
      routes: {
        fast: { kind: 'openai-chat', baseUrl: 'https://api.cerebras.ai/v1', apiKeyEnv: 'CEREBRAS_API_KEY', model: 'gpt-oss-120b', supportsPrediction: true, maxTokensField: 'max_completion_tokens' },
        complete: { kind: 'embedded', model: 'models/coder.gguf' },
        deep: { transport: 'sse', store: true },
      },
      breaker: { failureThreshold: 2, cooldownMs: 5_000 },
    });
    const config = loadProviderConfig({ OPENAI_API_KEY: 'sk-openai', CEREBRAS_API_KEY: 'csk-secret' }, file);
    expect(config.routes.fast).toEqual({
      kind: 'openai-chat',
      baseUrl: 'https://api.cerebras.ai/v1',
      apiKey: 'csk-secret',
      model: 'gpt-oss-120b',
      supportsPrediction: true,
      supportsTools: true,
      maxTokensField: 'max_completion_tokens',
    });
    expect(config.routes.complete).toMatchObject({ kind: 'embedded', model: 'models/coder.gguf', apiKey: null });
    expect(config.routes.deep).toMatchObject({ kind: 'openai-responses', apiKey: 'sk-openai', transport: 'sse', store: true });
    expect(config.breaker).toEqual({ failureThreshold: 2, cooldownMs: 5_000 });
  });

  it('lets network routes call tools unless the file turns it off; the embedded model never does', () => {
    const chat = loadProviderConfig({ OPENAI_BASE_URL: 'http://127.0.0.1:8080/v1' });
    expect(chat.routes.fast.supportsTools).toBe(true);
    expect(loadProviderConfig({ OPENAI_API_KEY: 'sk' }).routes.deep.supportsTools).toBe(true);
    expect(loadProviderConfig({}).routes.fast.supportsTools).toBe(false);
    const off = loadProviderConfig({ OPENAI_BASE_URL: 'http://127.0.0.1:8080/v1' }, JSON.stringify({ routes: { deep: { supportsTools: false } } }));
    expect([off.routes.fast.supportsTools, off.routes.deep.supportsTools]).toEqual([true, false]);
    expect(() => loadProviderConfig({}, JSON.stringify({ routes: { fast: { kind: 'embedded', supportsTools: true } } }))).toThrow(/cannot call tools/);
  });

  it('reports file mistakes as ProviderConfigError naming what to fix', () => {
    expect(() => loadProviderConfig({}, '{nope')).toThrow(ProviderConfigError);
    expect(() => loadProviderConfig({}, '{"routes": {"turbo": {}}}')).toThrow(/unknown route "turbo"/);
    expect(() => loadProviderConfig({}, '{"routes": {"fast": {"kind": "openai-chat", "baseUrl": "x", "apiKeyEnv": "MISSING"}}}')).toThrow(/MISSING/);
    expect(() => loadProviderConfig({}, '{"routes": {"fast": {"kind": "openai-chat", "baseUrl": "not a url"}}}')).toThrow(/not a URL/);
  });

  it('describes the config for logs without the keys', () => {
    const described = JSON.stringify(describeProviderConfig(loadProviderConfig({ OPENAI_API_KEY: 'sk-very-secret' })));
    expect(described).not.toContain('sk-very-secret');
    expect(described).toContain('"apiKey":"set"');
  });
});

describe('createProviders', () => {
  it('builds an adapter per route, sharing one instance between routes on the same endpoint', async () => {
    const config = loadProviderConfig({ OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' }, JSON.stringify({ routes: { complete: { kind: 'embedded' } } }));
    const built: string[] = [];
    const embedded: ModelProvider = { kind: 'embedded', close: async () => undefined, stream: async function* () {} };
    const providers = createProviders(config, { embedded: (route) => (built.push(route.model), embedded) });
    expect([providers.fast.kind, providers.deep.kind, providers.complete.kind]).toEqual(['openai-chat', 'openai-chat', 'embedded']);
    expect(providers.fast.breaker).toBe(providers.deep.breaker);
    expect(built).toEqual(['default']);
    await Promise.all([providers.fast.close(), providers.complete.close()]);
  });

  it('gives each model on an endpoint its own breaker; routes asking one endpoint for one model share one', async () => {
    const config = loadProviderConfig({ OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', FLINT_MODEL_FAST: 'small', FLINT_MODEL_DEEP: 'large' });
    const providers = createProviders(config);
    expect(providers.fast.breaker).not.toBe(providers.deep.breaker);
    expect(providers.complete.breaker).toBe(providers.fast.breaker);
    await providers.fast.close();
  });

  it('answers not_configured for an embedded route when no embedded factory is given', async () => {
    const providers = createProviders(loadProviderConfig({}));
    expect((await collectEvents(providers.fast, { model: 'default', messages: [], maxOutputTokens: 1 })).error).toMatchObject({ code: 'not_configured' });
  });
});
