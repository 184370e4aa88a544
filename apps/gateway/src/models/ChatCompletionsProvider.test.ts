/** What only the Chat Completions adapter does: its request body and its transport failures. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAIServer } from '@flint/test-kit';
import { ChatCompletionsProvider } from './ChatCompletionsProvider';
import { ProviderError, type ModelRequest } from './ModelProvider';
import { collectEvents } from './providerContract';

const request: ModelRequest = {
  model: 'gpt-oss-120b',
  messages: [{ role: 'user', content: 'Rename x to count.' }],
  maxOutputTokens: 100,
  temperature: 0,
  stop: ['<|end|>'],
  prediction: 'let x = 1;',
};

describe('ChatCompletionsProvider', () => {
  let server: FakeOpenAIServer;

  beforeAll(async () => {
    server = await FakeOpenAIServer.start();
  });
  afterAll(async () => {
    await server.close();
  });

  async function bodyFor(options: Partial<ConstructorParameters<typeof ChatCompletionsProvider>[0]>) {
    const provider = new ChatCompletionsProvider({ baseUrl: `${server.baseUrl}/`, ...options });
    const { error } = await collectEvents(provider, request);
    await provider.close();
    expect(error).toBeNull();
    return server.requests.at(-1)!;
  }

  it('asks for a stream with usage, max_tokens, temperature and stop, and sends no key when it has none', async () => {
    const sent = await bodyFor({});
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.body).toEqual({
      model: 'gpt-oss-120b',
      messages: request.messages,
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 100,
      temperature: 0,
      stop: ['<|end|>'],
    });
  });

  it('sends the prediction only to servers that support predicted outputs', async () => {
    const sent = await bodyFor({ supportsPrediction: true, maxTokensField: 'max_completion_tokens', includeUsage: false });
    expect(sent.body).toMatchObject({ prediction: { type: 'content', content: 'let x = 1;' }, max_completion_tokens: 100 });
    expect(sent.body).not.toHaveProperty('max_tokens');
    expect(sent.body).not.toHaveProperty('stream_options');
  });

  it('still finishes without a usage event when the server sends no usage chunk', async () => {
    const provider = new ChatCompletionsProvider({ baseUrl: server.baseUrl, includeUsage: false });
    const { events } = await collectEvents(provider, request);
    await provider.close();
    expect(events.map((e) => e.type)).not.toContain('usage');
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
  });

  it('reports a refused connection as network', async () => {
    const gone = await FakeOpenAIServer.start();
    const baseUrl = gone.baseUrl;
    await gone.close();
    const provider = new ChatCompletionsProvider({ baseUrl, name: 'llama-server' });
    const { error } = await collectEvents(provider, request);
    await provider.close();
    expect(error).toMatchObject({ code: 'network', provider: 'llama-server' });
  });

  it('reports an unknown model (404) as not_configured', async () => {
    const provider = new ChatCompletionsProvider({ baseUrl: `${server.baseUrl}/nowhere` });
    const { error } = await collectEvents(provider, request);
    await provider.close();
    expect(error).toMatchObject({ code: 'not_configured' });
  });
});

describe('ChatCompletionsProvider, deltas that arrive together', () => {
  const delta = (content: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;

  /** A loopback server that answers with `body` in one write: one network read for the client. */
  async function serve(body: string) {
    const { createServer } = await import('node:http');
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    return { baseUrl: `http://127.0.0.1:${port}/v1`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  }

  it('yields the deltas of one read as one text event that counts its tokens', async () => {
    const tokens = ['const ', 'a', ' = ', '1', ';\n'];
    const fake = await serve(tokens.map(delta).join('') + `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`);
    const provider = new ChatCompletionsProvider({ baseUrl: fake.baseUrl, includeUsage: false });
    const { events, text, error } = await collectEvents(provider, request);
    await provider.close();
    await fake.close();
    expect(error).toBeNull();
    expect(text).toBe(tokens.join(''));
    expect(events.filter((e) => e.type === 'text')).toEqual([{ type: 'text', text: tokens.join(''), tokens: 5 }]);
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
  });

  it('delivers the text that came before a bad event in the same read, then fails', async () => {
    const fake = await serve(delta('keep ') + delta('this') + 'data: {not json\n\n');
    const provider = new ChatCompletionsProvider({ baseUrl: fake.baseUrl, includeUsage: false });
    const { text, error } = await collectEvents(provider, request);
    await provider.close();
    await fake.close();
    expect(text).toBe('keep this');
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).code).toBe('bad_response');
  });
});
