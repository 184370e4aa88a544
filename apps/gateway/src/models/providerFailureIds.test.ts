/**
 * A provider failure names the provider's request (its `x-request-id`, or the stream's own id)
 * and the HTTP status it came with, as typed fields of the error: what an operator quotes to the
 * provider's support, never parsed from the message.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAIServer, fakeFaults, type FakeFault } from '@flint/test-kit';
import { ChatCompletionsProvider } from './ChatCompletionsProvider';
import type { ModelRequest } from '../core/ports/ModelProvider';
import { collectEvents } from '../../test/providerContract';
import { ResponsesProvider } from './ResponsesProvider';

/** An error status whose answer names the request, as OpenAI's do. */
const serverError = (status: number, requestId: string): FakeFault => ({
  kind: 'status',
  status,
  type: 'server_error',
  message: 'The server had an error while processing your request.',
  headers: { 'x-request-id': requestId },
});

const request: ModelRequest = { model: 'fake-model', messages: [{ role: 'user', content: 'hi' }], maxOutputTokens: 64 };

let fake: FakeOpenAIServer;
beforeAll(async () => {
  fake = await FakeOpenAIServer.start();
});
afterAll(() => fake.close());

describe('Chat Completions failures', () => {
  it('an error status carries the status and the x-request-id header', async () => {
    const provider = new ChatCompletionsProvider({ baseUrl: fake.baseUrl });
    fake.respondOnceWith({ fault: serverError(503, 'req_503') });
    const { error } = await collectEvents(provider, request);
    expect(error).toMatchObject({ code: 'overloaded', status: 503, requestId: 'req_503' });
    await provider.close();
  });

  it('a connection that drops mid-stream carries the id from the head that came before it', async () => {
    // The fake sends no x-request-id on a stream; this server does, then cuts the connection.
    const server: Server = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': 'req_mid' });
      res.write(`data: ${JSON.stringify({ id: 'chatcmpl-1', choices: [{ index: 0, delta: { content: 'Hel' }, finish_reason: null }] })}\n\n`, () => res.socket?.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const provider = new ChatCompletionsProvider({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` });
    const { text, error } = await collectEvents(provider, request);
    expect(text).toBe('Hel');
    expect(error).toMatchObject({ code: 'network', status: null, requestId: 'req_mid' });
    await provider.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('a stream without an x-request-id fails with none rather than a made-up one', async () => {
    const provider = new ChatCompletionsProvider({ baseUrl: fake.baseUrl });
    fake.respondOnceWith({ fault: fakeFaults.garbage(2) });
    const { error } = await collectEvents(provider, request);
    expect(error).toMatchObject({ code: 'bad_response', requestId: null });
    await provider.close();
  });
});

describe('Responses failures', () => {
  it('over the WebSocket, a response cut mid-stream is named by its response id', async () => {
    const provider = new ResponsesProvider({ baseUrl: fake.baseUrl, apiKey: 'k', transport: 'websocket' });
    fake.respondOnceWith({ fault: fakeFaults.disconnect(2) });
    const { text, error } = await collectEvents(provider, request);
    expect(text).not.toBe('');
    expect(error).toMatchObject({ code: 'network', requestId: expect.stringMatching(/^resp_\d+$/) });
    await provider.close();
  });

  it('over SSE, the x-request-id of a refusal, and the response id of a stream that turns to garbage', async () => {
    const provider = new ResponsesProvider({ baseUrl: fake.baseUrl, apiKey: 'k', transport: 'sse' });
    fake.respondOnceWith({ fault: serverError(500, 'req_500') });
    expect((await collectEvents(provider, request)).error).toMatchObject({ code: 'overloaded', status: 500, requestId: 'req_500' });
    fake.respondOnceWith({ fault: fakeFaults.garbage(1) });
    expect((await collectEvents(provider, request)).error).toMatchObject({ code: 'bad_response', status: null, requestId: expect.stringMatching(/^resp_\d+$/) });
    await provider.close();
  });
});
