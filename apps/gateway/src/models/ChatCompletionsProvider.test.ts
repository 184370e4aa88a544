/** What only the Chat Completions adapter does: its request body and its transport failures. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAIServer } from '@flint/test-kit';
import { ChatCompletionsProvider } from './ChatCompletionsProvider';
import { ProviderError, type ModelRequest } from '../core/ports/ModelProvider';
import { collectEvents, expectWellOrdered, toolCallsOf } from '../../test/providerContract';

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

  it('sends tools as function tools, and calls and their results as assistant tool_calls and tool messages', async () => {
    const provider = new ChatCompletionsProvider({ baseUrl: server.baseUrl });
    const parameters = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
    const { error } = await collectEvents(provider, {
      model: 'gpt-oss-120b',
      maxOutputTokens: 100,
      tools: [{ name: 'read_file', description: 'Read a file.', parameters }],
      messages: [
        { role: 'user', content: 'Fix a.ts.' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'read_file', arguments: '{"path":"a.ts"}' }] },
        { role: 'tool', callId: 'call_1', content: 'let x = 1;' },
        { role: 'assistant', content: 'Both.', toolCalls: [{ id: 'call_2', name: 'read_file', arguments: '{"path":"b.ts"}' }, { id: 'call_3', name: 'read_file', arguments: '{}' }] },
        { role: 'tool', callId: 'call_2', content: 'b' },
        { role: 'tool', callId: 'call_3', content: 'missing path' },
        { role: 'assistant', content: 'Done reading.', toolCalls: [] },
      ],
    });
    await provider.close();
    expect(error).toBeNull();
    const call = (id: string, args: string) => ({ id, type: 'function', function: { name: 'read_file', arguments: args } });
    const { body } = server.requests.at(-1)!;
    expect(body.tools).toEqual([{ type: 'function', function: { name: 'read_file', description: 'Read a file.', parameters } }]);
    expect(body.messages).toEqual([
      { role: 'user', content: 'Fix a.ts.' },
      { role: 'assistant', content: null, tool_calls: [call('call_1', '{"path":"a.ts"}')] },
      { role: 'tool', tool_call_id: 'call_1', content: 'let x = 1;' },
      { role: 'assistant', content: 'Both.', tool_calls: [call('call_2', '{"path":"b.ts"}'), call('call_3', '{}')] },
      { role: 'tool', tool_call_id: 'call_2', content: 'b' },
      { role: 'tool', tool_call_id: 'call_3', content: 'missing path' },
      { role: 'assistant', content: 'Done reading.' },
    ]);
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

describe('ChatCompletionsProvider, deltas that arrive together', () => {
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

describe('ChatCompletionsProvider, tool calls as servers stream them', () => {
  const choice = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const calls = (...entries: object[]) => choice({ tool_calls: entries });
  const end = (finish = 'tool_calls') => choice({}, finish) + 'data: [DONE]\n\n';

  async function answer(body: string) {
    const fake = await serve(body);
    const provider = new ChatCompletionsProvider({ baseUrl: fake.baseUrl, includeUsage: false });
    const result = await collectEvents(provider, request);
    await provider.close();
    await fake.close();
    return result;
  }

  it('reads servers that repeat a call\'s id and name, or send arguments with the name, as one call', async () => {
    const { events, error } = await answer(
      calls({ index: 0, id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"pa' } }) +
        calls({ index: 0, id: 'call_1', type: 'function', function: { name: 'read_file', arguments: 'th":"a.ts"}' } }) +
        calls({ index: 0, function: {} }) +
        end(),
    );
    expect(error).toBeNull();
    expectWellOrdered(events);
    expect(toolCallsOf(events)).toEqual([{ id: 'call_1', name: 'read_file', arguments: '{"path":"a.ts"}' }]);
    expect(events.filter((e) => e.type === 'tool-call')).toHaveLength(1);
  });

  it('reads whole calls sent in one chunk, numbering entries without an index by position and naming calls without an id', async () => {
    const { events, error } = await answer(
      calls({ id: 'call_a', function: { name: 'read_file', arguments: '{"path":"a.ts"}' } }, { function: { name: 'read_file', arguments: '{"path":"b.ts"}' } }) + end(),
    );
    expect(error).toBeNull();
    expect(toolCallsOf(events)).toEqual([
      { id: 'call_a', name: 'read_file', arguments: '{"path":"a.ts"}' },
      { id: 'call_1', name: 'read_file', arguments: '{"path":"b.ts"}' },
    ]);
  });

  it('ends an answer that made calls with tool_calls even when the server says stop, and keeps length', async () => {
    const call = calls({ index: 0, id: 'call_1', function: { name: 'read_file', arguments: '{}' } });
    expect((await answer(call + end('stop'))).events.at(-1)).toEqual({ type: 'done', finishReason: 'tool_calls' });
    expect((await answer(call + end('length'))).events.at(-1)).toEqual({ type: 'done', finishReason: 'length' });
    expect((await answer(delta('no calls') + end('stop'))).events.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
  });

  it('fails as bad_response on calls it cannot pass on in order: interleaved arguments, a call without a name', async () => {
    const interleaved = await answer(
      calls({ index: 0, id: 'call_a', function: { name: 'a', arguments: '{' } }) +
        calls({ index: 1, id: 'call_b', function: { name: 'b', arguments: '{' } }) +
        calls({ index: 0, function: { arguments: '}' } }) +
        end(),
    );
    expect(interleaved.error).toMatchObject({ code: 'bad_response' });
    expect(toolCallsOf(interleaved.events).map((c) => c.arguments)).toEqual(['{', '{']);
    const nameless = await answer(calls({ index: 0, id: 'call_a', function: { arguments: '{}' } }) + end());
    expect(nameless.error).toMatchObject({ code: 'bad_response' });
  });
});
