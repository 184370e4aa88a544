/**
 * What only the Responses adapter does: continuation with previous_response_id, reconnecting
 * after the server's connection cap, one response per socket, and the SSE fallback.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { defaultFakeText, FakeClock, FakeOpenAIServer, fakeFaults } from '@flint/test-kit';
import type { ModelMessage, ModelRequest, ToolSpec } from '../core/ports/ModelProvider';
import { collectEvents, toolCallsOf } from '../../test/providerContract';
import { ResponsesProvider, type ResponsesOptions } from './ResponsesProvider';
import { ResponsesSocket } from './ResponsesSocket';

const system: ModelMessage = { role: 'system', content: 'You are Flint.' };
const firstUser: ModelMessage = { role: 'user', content: 'Write a function.' };

function turn(threadId: string, ...messages: ModelMessage[]): ModelRequest {
  return { model: 'fake-model', messages, maxOutputTokens: 64, threadId };
}

/** The second turn of a thread whose first answer was `defaultFakeText`. */
function followUp(threadId: string, content = 'Now add tests.'): ModelRequest {
  return turn(threadId, system, firstUser, { role: 'assistant', content: defaultFakeText }, { role: 'user', content });
}

describe('ResponsesProvider', () => {
  let server: FakeOpenAIServer;
  let provider: ResponsesProvider;

  beforeAll(async () => {
    server = await FakeOpenAIServer.start();
  });
  afterEach(async () => {
    await provider?.close();
    server.refuseUpgradeStatus = null;
    server.respondWith({});
  });
  afterAll(async () => {
    await server.close();
  });

  function use(options: Partial<ResponsesOptions> = {}): ResponsesProvider {
    provider = new ResponsesProvider({ baseUrl: server.baseUrl, apiKey: 'sk-test', transport: 'websocket', ...options });
    return provider;
  }

  async function ok(request: ModelRequest): Promise<void> {
    const { text, error } = await collectEvents(provider, request);
    expect(error).toBeNull();
    expect(text).toBe(defaultFakeText);
  }

  const lastBody = () => server.requests.at(-1)!.body;

  it('opens the socket with the key on the upgrade and sends response.create without transport fields', async () => {
    use();
    await ok(turn('t0', system, firstUser));
    const sent = server.requests.at(-1)!;
    expect(sent.transport).toBe('ws');
    expect(sent.headers.authorization).toBe('Bearer sk-test');
    expect(sent.body).toMatchObject({ type: 'response.create', model: 'fake-model', input: [system, firstUser], max_output_tokens: 64, store: false });
    expect(sent.body).not.toHaveProperty('stream');
  });

  it('sends tools as function tools, and calls and results as function_call and function_call_output items after their text', async () => {
    use();
    const parameters = { type: 'object', properties: { path: { type: 'string' } } };
    await ok({
      ...turn(
        't-tools',
        system,
        firstUser,
        { role: 'assistant', content: 'Reading both.', toolCalls: [{ id: 'call_a', name: 'read_file', arguments: '{"path":"a.ts"}' }, { id: 'call_b', name: 'read_file', arguments: '{}' }] },
        { role: 'tool', callId: 'call_a', content: 'let a = 1;' },
        { role: 'tool', callId: 'call_b', content: 'missing path' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'call_c', name: 'read_file', arguments: '{"path":"b.ts"}' }] },
        { role: 'tool', callId: 'call_c', content: 'let b = 2;' },
      ),
      tools: [{ name: 'read_file', description: 'Read a file.', parameters }],
    });
    expect(lastBody().tools).toEqual([{ type: 'function', name: 'read_file', description: 'Read a file.', parameters, strict: false }]);
    expect(lastBody().input).toEqual([
      system,
      firstUser,
      { role: 'assistant', content: 'Reading both.' },
      { type: 'function_call', call_id: 'call_a', name: 'read_file', arguments: '{"path":"a.ts"}' },
      { type: 'function_call', call_id: 'call_b', name: 'read_file', arguments: '{}' },
      { type: 'function_call_output', call_id: 'call_a', output: 'let a = 1;' },
      { type: 'function_call_output', call_id: 'call_b', output: 'missing path' },
      { type: 'function_call', call_id: 'call_c', name: 'read_file', arguments: '{"path":"b.ts"}' },
      { type: 'function_call_output', call_id: 'call_c', output: 'let b = 2;' },
    ]);
  });

  it('sends no tools when the request has none', async () => {
    use();
    await ok(turn('t-no-tools', system, firstUser));
    expect(lastBody()).not.toHaveProperty('tools');
  });

  it('sends response.create on an idle socket before the first next() returns: no await before it leaves', async () => {
    use();
    await ok(turn('t-sync', system, firstUser)); // the socket is open and idle
    const sends = vi.spyOn(ResponsesSocket.prototype, 'send');
    try {
      const events = provider.stream(followUp('t-sync'), new AbortController().signal);
      const first = events.next();
      // Still in the caller's turn of the event loop: a turn's first status must not go ahead.
      expect(sends.mock.calls.map(([message]) => (message as { type: string }).type)).toEqual(['response.create']);
      await first;
      for await (const _ of events) void _;
    } finally {
      sends.mockRestore();
    }
    expect(lastBody().previous_response_id).toMatch(/^resp_/);
  });

  it('sends only the new messages with previous_response_id on the next turn of a thread', async () => {
    use();
    await ok(turn('t1', system, firstUser));
    await ok(followUp('t1'));
    expect(lastBody().previous_response_id).toMatch(/^resp_/);
    expect(lastBody().input).toEqual([{ role: 'user', content: 'Now add tests.' }]);
    await ok(turn('t1-other', system, firstUser));
    expect(lastBody().previous_response_id).toBeUndefined();
  });

  it('sends the full input when the thread history no longer extends the last response (context trimmed)', async () => {
    use();
    await ok(turn('t2', system, firstUser));
    await ok(turn('t2', system, { role: 'user', content: 'Something else entirely.' }));
    expect(lastBody().previous_response_id).toBeUndefined();
    expect(lastBody().input).toHaveLength(2);
  });

  it('resends the full input once when the server says previous_response_not_found', async () => {
    use();
    await ok(turn('t3', system, firstUser));
    server.forgetResponses();
    const before = server.requests.length;
    await ok(followUp('t3'));
    const [rejected, retried] = server.requests.slice(before);
    expect(rejected!.outcome).toBe('refused');
    expect(rejected!.body.previous_response_id).toMatch(/^resp_/);
    expect(retried!.body.previous_response_id).toBeUndefined();
    expect(retried!.body.input).toHaveLength(4);
  });

  it('reconnects transparently after the server closed the socket between responses', async () => {
    use();
    await ok(turn('t4', system, firstUser));
    const sockets = server.wsConnections;
    server.closeWebSockets();
    await server.waitFor((s) => s.openWebSocketCount === 0);
    await ok(followUp('t4'));
    expect(server.wsConnections).toBe(sockets + 1);
    // With store: false the previous response lived only in the closed connection's memory.
    expect(lastBody().previous_response_id).toBeUndefined();
  });

  it('reconnects and resends when a response.create is refused with websocket_connection_limit_reached', async () => {
    use();
    await ok(turn('t5', system, firstUser));
    server.expireWebSockets();
    const sockets = server.wsConnections;
    await ok(followUp('t5'));
    expect(server.wsConnections).toBe(sockets + 1);
    expect(server.requests.at(-2)!.outcome).toBe('refused');
  });

  it('with store: true continues a thread on a new socket too', async () => {
    use({ store: true });
    await ok(turn('t6', system, firstUser));
    server.closeWebSockets();
    await server.waitFor((s) => s.openWebSocketCount === 0);
    await ok(followUp('t6'));
    expect(lastBody().previous_response_id).toMatch(/^resp_/);
  });

  it('runs concurrent requests on separate sockets, one response per socket', async () => {
    use();
    server.respondWith({ delayMs: 2 });
    const sockets = server.wsConnections;
    await Promise.all([ok(turn('a', firstUser)), ok(turn('b', firstUser)), ok(turn('c', firstUser))]);
    expect(server.wsConnections - sockets).toBe(3);
    expect(server.requests.slice(-3).every((r) => r.outcome === 'completed')).toBe(true);
  });

  it('queues requests beyond maxSockets instead of opening more', async () => {
    use({ maxSockets: 1 });
    server.respondWith({ delayMs: 1 });
    const sockets = server.wsConnections;
    await Promise.all([ok(turn('a', firstUser)), ok(turn('b', firstUser))]);
    expect(server.wsConnections - sockets).toBe(1);
  });

  it('cancels by closing the socket, and has a fresh socket ready for the next request', async () => {
    use();
    server.respondOnceWith({ fault: fakeFaults.stall(1) });
    const controller = new AbortController();
    for await (const event of provider.stream(turn('t7', firstUser), controller.signal)) {
      if (event.type === 'text') controller.abort();
    }
    await server.waitFor((s) => s.requests.at(-1)!.outcome === 'client-closed');
    await server.waitFor((s) => s.openWebSocketCount === 1);
    const sockets = server.wsConnections;
    await ok(turn('t7', firstUser));
    expect(server.wsConnections).toBe(sockets);
  });

  it("falls back to SSE in 'auto' when the upgrade is refused, and retries the socket after webSocketRetryMs", async () => {
    const clock = new FakeClock();
    use({ transport: 'auto', clock, webSocketRetryMs: 60_000 });
    server.refuseUpgradeStatus = 404;
    await ok(turn('t8', firstUser));
    expect(server.requests.at(-1)).toMatchObject({ transport: 'http', path: '/v1/responses' });
    expect(lastBody().stream).toBe(true);
    const sockets = server.wsConnections;
    server.refuseUpgradeStatus = null;
    await ok(turn('t8', firstUser));
    expect(server.requests.at(-1)!.transport).toBe('http');
    clock.advance(60_000);
    await ok(turn('t8', firstUser));
    expect(server.requests.at(-1)!.transport).toBe('ws');
    expect(server.wsConnections).toBe(sockets + 1);
  });

  it("reports a refused key on the upgrade as auth instead of falling back", async () => {
    use({ transport: 'auto' });
    server.refuseUpgradeStatus = 401;
    expect((await collectEvents(provider, turn('t9', firstUser))).error).toMatchObject({ code: 'auth' });
  });

  it("reports a refused upgrade as an error in 'websocket' mode", async () => {
    use({ transport: 'websocket' });
    server.refuseUpgradeStatus = 404;
    expect((await collectEvents(provider, turn('t10', firstUser))).error).toMatchObject({ code: 'not_configured' });
  });

  it('over SSE with store: true, continues a thread with previous_response_id', async () => {
    use({ transport: 'sse', store: true });
    await ok(turn('t11', system, firstUser));
    await ok(followUp('t11'));
    expect(lastBody()).toMatchObject({ previous_response_id: expect.stringMatching(/^resp_/), input: [{ role: 'user', content: 'Now add tests.' }] });
  });

  for (const transport of ['websocket', 'sse'] as const) {
    it(`over ${transport === 'sse' ? 'SSE' : 'the WebSocket'}, deltas that arrive together come as one text event with their count`, async () => {
      use({ transport });
      server.respondWith({ text: defaultFakeText, chunkChars: 2 });
      const { events, text, error } = await collectEvents(provider, turn(`batch-${transport}`, system, firstUser));
      expect(error).toBeNull();
      expect(text).toBe(defaultFakeText);
      const texts = events.filter((e): e is Extract<typeof e, { type: 'text' }> => e.type === 'text');
      const deltas = Math.ceil(defaultFakeText.length / 2);
      // Every delta is counted once; sent back to back on loopback, they arrive in few reads.
      expect(texts.reduce((n, e) => n + (e.tokens ?? 1), 0)).toBe(deltas);
      expect(texts.length).toBeLessThan(deltas / 2);
    });
  }
});

describe('ResponsesProvider, continuing a thread after tool calls', () => {
  let server: FakeOpenAIServer;
  let provider: ResponsesProvider;

  beforeAll(async () => {
    server = await FakeOpenAIServer.start();
  });
  afterEach(async () => {
    await provider?.close();
  });
  afterAll(async () => {
    await server.close();
  });

  const tools: ToolSpec[] = [{ name: 'read_file', description: 'Read a file.', parameters: { type: 'object' } }];
  const results: ModelMessage[] = [
    { role: 'tool', callId: 'call_a', content: 'let a = 1;' },
    { role: 'tool', callId: 'call_b', content: 'let b = 2;' },
  ];

  /** A first turn whose answer reads two files, and that answer as the agent's loop sends it back: exactly as streamed. */
  async function firstTurn(threadId: string): Promise<ModelMessage> {
    server.respondOnceWith({
      chunks: ['Reading ', 'both.'],
      toolCalls: [
        { id: 'call_a', name: 'read_file', chunks: ['{"path":', '"a.ts"}'] },
        { id: 'call_b', name: 'read_file', chunks: ['{"path":"b', '.ts"}'] },
      ],
    });
    server.respondOnceWith({ text: 'Done.' });
    const { events, text, error } = await collectEvents(provider, { ...turn(threadId, system, firstUser), tools });
    expect(error).toBeNull();
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'tool_calls' });
    return { role: 'assistant', content: text, toolCalls: toolCallsOf(events) };
  }

  for (const transport of ['websocket', 'sse'] as const) {
    const over = transport === 'sse' ? 'over SSE (store: true)' : 'over the WebSocket';

    it(`${over}, sends only the calls' results with previous_response_id`, async () => {
      provider = new ResponsesProvider({ baseUrl: server.baseUrl, apiKey: 'sk-test', transport, store: transport === 'sse' });
      const answer = await firstTurn(`loop-${transport}`);
      const first = server.requests.at(-1)!;
      expect(await collectEvents(provider, { ...turn(`loop-${transport}`, system, firstUser, answer, ...results), tools })).toMatchObject({ error: null, text: 'Done.' });
      const sent = server.requests.at(-1)!;
      expect(sent.transport).toBe(transport === 'sse' ? 'http' : 'ws');
      expect(sent.body.previous_response_id).toBe(first.responseId);
      expect(sent.body.input).toEqual([
        { type: 'function_call_output', call_id: 'call_a', output: 'let a = 1;' },
        { type: 'function_call_output', call_id: 'call_b', output: 'let b = 2;' },
      ]);
    });

    it(`${over}, sends the full input when the answer sent back is not the one streamed`, async () => {
      provider = new ResponsesProvider({ baseUrl: server.baseUrl, apiKey: 'sk-test', transport, store: transport === 'sse' });
      const variants: Array<(answer: Extract<ModelMessage, { role: 'assistant' }>) => ModelMessage> = [
        (answer) => ({ ...answer, toolCalls: answer.toolCalls!.map((call, i) => (i === 1 ? { ...call, arguments: '{"path":"c.ts"}' } : call)) }),
        (answer) => ({ ...answer, toolCalls: answer.toolCalls!.slice(0, 1) }),
        (answer) => ({ ...answer, content: '' }),
        (answer) => ({ role: 'assistant', content: answer.content }),
      ];
      for (const [i, vary] of variants.entries()) {
        const threadId = `differs-${transport}-${i}`;
        const answer = (await firstTurn(threadId)) as Extract<ModelMessage, { role: 'assistant' }>;
        const { error } = await collectEvents(provider, { ...turn(threadId, system, firstUser, vary(answer), ...results), tools });
        expect(error).toBeNull();
        const { body } = server.requests.at(-1)!;
        expect(body.previous_response_id).toBeUndefined();
        expect((body.input as unknown[]).slice(0, 2)).toEqual([system, firstUser]);
        expect((body.input as unknown[]).slice(-2)).toEqual([
          { type: 'function_call_output', call_id: 'call_a', output: 'let a = 1;' },
          { type: 'function_call_output', call_id: 'call_b', output: 'let b = 2;' },
        ]);
      }
    });
  }
});
