/**
 * Every network adapter against the fake OpenAI server on loopback: the shared contract, then
 * the same fault matrix for each (the wire differs, the typed outcome must not).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { defaultFakeText, FakeOpenAIServer, fakeFaults, type FakeScript } from '@flint/test-kit';
import { ChatCompletionsProvider } from './ChatCompletionsProvider';
import { ProviderError, type ModelProvider, type ModelRequest, type ToolCall } from '../core/ports/ModelProvider';
import { collectEvents, describeProviderContract, expectWellOrdered, toolCallsOf } from '../../test/providerContract';
import { ResponsesProvider } from './ResponsesProvider';

interface Adapter {
  name: string;
  /** Which path the fake sees the requests on, and over what. */
  transport: 'http' | 'ws';
  create(server: { baseUrl: string }, idleTimeoutMs?: number): ModelProvider;
}

const apiKey = 'sk-test-key';
const adapters: Adapter[] = [
  {
    name: 'Chat Completions SSE',
    transport: 'http',
    create: (server, idleTimeoutMs = 5_000) => new ChatCompletionsProvider({ baseUrl: server.baseUrl, apiKey, idleTimeoutMs }),
  },
  {
    name: 'Responses WebSocket',
    transport: 'ws',
    create: (server, idleTimeoutMs = 5_000) =>
      new ResponsesProvider({ baseUrl: server.baseUrl, apiKey, transport: 'websocket', idleTimeoutMs }),
  },
  {
    name: 'Responses SSE',
    transport: 'http',
    create: (server, idleTimeoutMs = 5_000) => new ResponsesProvider({ baseUrl: server.baseUrl, apiKey, transport: 'sse', idleTimeoutMs }),
  },
];

const request: ModelRequest = {
  model: 'fake-model',
  messages: [
    { role: 'system', content: 'You are Flint.' },
    { role: 'user', content: 'Say hello.' },
  ],
  maxOutputTokens: 256,
};

async function failureOf(provider: ModelProvider): Promise<{ error: ProviderError; text: string }> {
  const { error, text } = await collectEvents(provider, request);
  expect(error).toBeInstanceOf(ProviderError);
  return { error: error as ProviderError, text };
}

for (const adapter of adapters) {
  describeProviderContract(adapter.name, async () => {
    const server = await FakeOpenAIServer.start();
    const provider = adapter.create(server);
    return {
      provider,
      expectedText: defaultFakeText,
      request,
      teardown: async () => {
        await provider.close();
        await server.close();
      },
    };
  });
}

describe.each(adapters)('$name against a misbehaving server', (adapter) => {
  let server: FakeOpenAIServer;
  let provider: ModelProvider;

  beforeAll(async () => {
    server = await FakeOpenAIServer.start();
  });
  afterEach(async () => {
    await provider?.close();
    server.respondWith({});
  });
  afterAll(async () => {
    await server.close();
  });

  function use(idleTimeoutMs?: number): ModelProvider {
    provider = adapter.create(server, idleTimeoutMs);
    return provider;
  }

  it('reports a refused key as auth and sends the key as a bearer token', async () => {
    server.respondOnceWith({ fault: fakeFaults.unauthorized() });
    expect((await failureOf(use())).error.code).toBe('auth');
    expect(server.requests.at(-1)?.headers.authorization).toBe(`Bearer ${apiKey}`);
  });

  it('reports 429 as rate_limited with retryAfterMs from retry-after (seconds) or retry-after-ms', async () => {
    server.respondOnceWith({ fault: fakeFaults.rateLimited({ retryAfterS: 2 }) });
    const seconds = (await failureOf(use())).error;
    expect([seconds.code, seconds.retryAfterMs]).toEqual(['rate_limited', 2_000]);
    server.respondOnceWith({ fault: fakeFaults.rateLimited({ retryAfterS: 2, retryAfterMs: 350 }) });
    const ms = (await failureOf(provider)).error;
    expect([ms.code, ms.retryAfterMs]).toEqual(['rate_limited', 350]);
  });

  it('reports insufficient_quota as quota, not as a rate limit', async () => {
    server.respondOnceWith({ fault: fakeFaults.insufficientQuota() });
    expect((await failureOf(use())).error.code).toBe('quota');
  });

  it('reports context_length_exceeded as context_length', async () => {
    server.respondOnceWith({ fault: fakeFaults.contextLength() });
    expect((await failureOf(use())).error.code).toBe('context_length');
  });

  it('reports 500 and 503 as overloaded', async () => {
    server.respondOnceWith({ fault: fakeFaults.serverError(500) });
    expect((await failureOf(use())).error.code).toBe('overloaded');
    server.respondOnceWith({ fault: fakeFaults.serverError(503) });
    expect((await failureOf(provider)).error.code).toBe('overloaded');
  });

  it('reports a mid-stream disconnect as network after yielding the text before it', async () => {
    server.respondOnceWith({ chunks: ['Hel', 'lo', ' world'], fault: fakeFaults.disconnect(2) });
    const { error, text } = await failureOf(use());
    expect(error.code).toBe('network');
    expect(text).toBe('Hello');
  });

  it('reports a failure the provider sends in-band after some text', async () => {
    server.respondOnceWith({ chunks: ['Hel', 'lo'], fault: fakeFaults.failed('server_error', 1) });
    const { error, text } = await failureOf(use());
    expect(error.code).toBe('overloaded');
    expect(text).toBe('Hel');
  });

  it('reports a data line that is not JSON as bad_response', async () => {
    server.respondOnceWith({ fault: fakeFaults.garbage(1) });
    expect((await failureOf(use())).error.code).toBe('bad_response');
  });

  it('reports a stall as network once the idle timeout passes, and closes the connection', async () => {
    server.respondOnceWith({ chunks: ['Hel', 'lo'], fault: fakeFaults.stall(1) });
    const started = performance.now();
    const { error, text } = await failureOf(use(150));
    expect(error.code).toBe('network');
    expect(text).toBe('Hel');
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    await server.waitFor((s) => s.requests.at(-1)?.outcome === 'client-closed');
  });

  it('reuses one connection for sequential requests', async () => {
    const before = adapter.transport === 'ws' ? server.wsConnections : server.tcpConnections;
    use();
    for (let i = 0; i < 5; i++) {
      const { text, error } = await collectEvents(provider, request);
      expect(error).toBeNull();
      expect(text).toBe(defaultFakeText);
    }
    const after = adapter.transport === 'ws' ? server.wsConnections : server.tcpConnections;
    expect(after - before).toBe(1);
    const recent = server.requests.slice(-5);
    expect(new Set(recent.map((r) => r.connectionId)).size).toBe(1);
  });

  it('closes the upstream request when the signal aborts, so the server stops generating', async () => {
    server.respondOnceWith({ chunks: ['Hel', 'lo'], fault: fakeFaults.stall(1) });
    const controller = new AbortController();
    for await (const event of use().stream(request, controller.signal)) {
      if (event.type === 'text') controller.abort();
    }
    await server.waitFor((s) => s.requests.at(-1)?.outcome === 'client-closed');
  });

  it('yields exact text when the server splits the stream inside multi-byte characters, with CRLF, comments and null choices', async () => {
    const text = 'é🚀中😀 — “ok” ✓ naïve';
    server.respondOnceWith({
      text,
      chunkChars: 1,
      splitEveryBytes: 3,
      lineEnding: '\r\n',
      keepAliveComments: true,
      nullChoices: true,
    });
    const result = await collectEvents(use(), request);
    expect(result.error).toBeNull();
    expect(result.text).toBe(text);
    expectWellOrdered(result.events);
  });

  it('sends maxOutputTokens and reports usage with cached tokens and a length finish', async () => {
    server.respondOnceWith({ finishReason: 'length', usage: { inputTokens: 100, outputTokens: 7, cachedInputTokens: 64 } });
    const { events } = await collectEvents(use(), request);
    expect(events.slice(-2)).toEqual([
      { type: 'usage', inputTokens: 100, outputTokens: 7, cachedInputTokens: 64 },
      { type: 'done', finishReason: 'length' },
    ]);
    const body = server.requests.at(-1)!.body;
    expect(body.max_tokens ?? body.max_output_tokens).toBe(256);
  });
});

describe.each(adapters)('$name: tool calls', (adapter) => {
  let server: FakeOpenAIServer;
  let provider: ModelProvider;

  beforeAll(async () => {
    server = await FakeOpenAIServer.start();
    provider = adapter.create(server);
  });
  afterAll(async () => {
    await provider.close();
    await server.close();
  });

  const withTools: ModelRequest = {
    ...request,
    tools: [{ name: 'apply_patch', description: 'Edit files with a V4A patch.', parameters: { type: 'object', properties: { input: { type: 'string' } } } }],
  };
  /** JSON arguments with escapes (quotes, newlines, a backslash) and characters outside the BMP. */
  const patch = JSON.stringify({ input: '*** Begin Patch\n*** Update File: a.ts\n-const s = "x";\n+const s = "é🚀 中\\";\n*** End Patch' });

  /** Answers that only call tools unless the script says what to write first. */
  async function answered(script: Partial<FakeScript>) {
    server.respondOnceWith({ text: '', ...script });
    const result = await collectEvents(provider, withTools);
    expect(result.error).toBeNull();
    expectWellOrdered(result.events);
    return { ...result, calls: toolCallsOf(result.events) };
  }

  it('streams a call whose arguments come one UTF-16 unit per chunk (escapes and surrogate pairs cut) as a tool-call and deltas that make them exactly', async () => {
    const { calls, events } = await answered({ toolCalls: [{ id: 'call_1', name: 'apply_patch', chunks: patch.split('') }], splitEveryBytes: 7 });
    expect(calls).toEqual([{ id: 'call_1', name: 'apply_patch', arguments: patch }]);
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'tool_calls' });
  });

  it('passes a piece of arguments on as it arrives, before the call ends', async () => {
    server.respondOnceWith({ text: '', toolCalls: [{ id: 'call_1', name: 'apply_patch', chunks: ['{"input":', '"*** Begin Patch"}'] }], holdAfterChunks: 1 });
    const events = provider.stream(withTools, new AbortController().signal)[Symbol.asyncIterator]();
    let next = await events.next();
    while (!next.done && next.value.type !== 'tool-call-delta') next = await events.next();
    // The server holds the rest of the answer back: this piece came while the call was still open.
    expect(next.value).toEqual({ type: 'tool-call-delta', index: 0, arguments: '{"input":' });
    expect(server.heldCount).toBe(1);
    server.release();
    const rest: string[] = [];
    for (next = await events.next(); !next.done; next = await events.next()) if (next.value.type === 'tool-call-delta') rest.push(next.value.arguments);
    expect(rest.join('')).toBe('"*** Begin Patch"}');
  });

  it('numbers two calls of one answer from 0, each with its own arguments, and ends with tool_calls', async () => {
    const read: ToolCall = { id: 'call_a', name: 'read_file', arguments: '{"path":"a.ts"}' };
    const write: ToolCall = { id: 'call_b', name: 'apply_patch', arguments: patch };
    const { calls, events } = await answered({
      toolCalls: [
        { id: read.id, name: read.name, chunks: ['{"path":', '"a.ts"}'] },
        { id: write.id, name: write.name, chunks: [patch.slice(0, 10), patch.slice(10)] },
      ],
    });
    expect(calls).toEqual([read, write]);
    expect(events.filter((e) => e.type === 'tool-call')).toEqual([
      { type: 'tool-call', index: 0, id: 'call_a', name: 'read_file' },
      { type: 'tool-call', index: 1, id: 'call_b', name: 'apply_patch' },
    ]);
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'tool_calls' });
  });

  it('delivers the text before a call first', async () => {
    const { events, text, calls } = await answered({ chunks: ['Let me ', 'look.'], toolCalls: [{ id: 'call_1', name: 'read_file', arguments: '{}' }] });
    expect(text).toBe('Let me look.');
    expect(calls).toEqual([{ id: 'call_1', name: 'read_file', arguments: '{}' }]);
    const firstCall = events.findIndex((e) => e.type === 'tool-call');
    expect(events.slice(0, firstCall).every((e) => e.type === 'text')).toBe(true);
    expect(firstCall).toBeGreaterThan(0);
  });
});
