/**
 * The provider transport as deployments meet it, through the Chat Completions and Responses
 * adapters' public `stream`: an HTTP CONNECT proxy (chosen as curl reads the environment, the
 * same for SSE and the WebSocket; HTTP/2 inside its tunnel), compressed SSE, an HTTP/2-only
 * endpoint over TLS, redirects, a kept-alive socket the server drops, certificates. Real servers on loopback
 * (node:http, node:https, node:http2) with test-kit's test certificate.
 */
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectProxy, FakeOpenAIServer, defaultFakeText, testCertificate } from '@flint/test-kit';
import { ChatCompletionsProvider } from './ChatCompletionsProvider';
import { ProviderError, type ModelProvider, type ModelRequest } from '../core/ports/ModelProvider';
import { collectEvents } from '../../test/providerContract';
import { ResponsesProvider } from './ResponsesProvider';

const { key, cert } = testCertificate();

const request: ModelRequest = { model: 'm', messages: [{ role: 'user', content: 'hi' }], maxOutputTokens: 50 };
const event = (content: string) => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
const finalEvents = `data: ${JSON.stringify({ id: 'c1', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`;

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  httpVersion: string;
}

type Handler = (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse, seen: Seen) => void;

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Runs `handler` for each request once its body is in; records every request. */
function recording(handler: Handler) {
  const seen: Seen[] = [];
  const listener = (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (piece: string) => (body += piece));
    req.on('end', () => {
      const entry = { method: req.method ?? '', url: req.url ?? '', headers: req.headers as http.IncomingHttpHeaders, body, httpVersion: req.httpVersion };
      seen.push(entry);
      handler(req, res, entry);
    });
  };
  return { seen, listener };
}

async function listen(server: http.Server | https.Server | http2.Http2SecureServer): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => {
    if ('closeAllConnections' in server) server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return (server.address() as AddressInfo).port;
}

const streamText: Handler = (_req, res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.end(event('Hello, ') + event('world') + finalEvents);
};

function chat(baseUrl: string, options: { ca?: Buffer; apiKey?: string } = {}): ChatCompletionsProvider {
  const provider = new ChatCompletionsProvider({ baseUrl, includeUsage: false, ...options });
  cleanups.push(() => provider.close());
  return provider;
}

async function failureOf(provider: ModelProvider): Promise<ProviderError> {
  const { error } = await collectEvents(provider, request);
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

/** Sets proxy variables for this test (the dispatcher reads them when it is made). */
function proxyEnvironment(values: Record<string, string>): void {
  const names = ['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy', 'ALL_PROXY', 'all_proxy'];
  const saved = new Map(names.map((name) => [name, process.env[name]]));
  for (const name of names) delete process.env[name];
  Object.assign(process.env, values);
  cleanups.push(() => {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
}

async function startProxy(hosts?: Record<string, string>): Promise<ConnectProxy> {
  const proxy = await ConnectProxy.start({ hosts });
  cleanups.push(() => proxy.close());
  return proxy;
}

describe('provider transport', () => {
  it('goes through the HTTPS_PROXY tunnel to a TLS endpoint, and straight there for hosts in NO_PROXY', async () => {
    const { seen, listener } = recording(streamText);
    const port = await listen(https.createServer({ key, cert }, listener));
    const proxy = await startProxy();
    proxyEnvironment({ HTTPS_PROXY: proxy.url, NO_PROXY: '' });
    const viaProxy = await collectEvents(chat(`https://localhost:${port}/v1`, { ca: cert }), request);
    expect(viaProxy.error).toBeNull();
    expect(viaProxy.text).toBe('Hello, world');
    expect(proxy.seen).toEqual([`localhost:${port}`]);

    proxyEnvironment({ HTTPS_PROXY: proxy.url, NO_PROXY: 'localhost' });
    const direct = await collectEvents(chat(`https://localhost:${port}/v1`, { ca: cert }), request);
    expect(direct.text).toBe('Hello, world');
    expect(proxy.seen).toHaveLength(1);
    expect(seen).toHaveLength(2);
  });

  for (const variable of ['HTTP_PROXY', 'ALL_PROXY'] as const) {
    it(`goes through ${variable} for a plain http endpoint, SSE and the Responses WebSocket alike`, async () => {
      const server = await FakeOpenAIServer.start();
      cleanups.push(() => server.close());
      const proxy = await startProxy();
      proxyEnvironment({ [variable]: proxy.url });
      const { port } = new URL(server.baseUrl);
      expect((await collectEvents(chat(server.baseUrl), request)).text).toBe(defaultFakeText);
      for (const transport of ['sse', 'websocket'] as const) {
        const provider = new ResponsesProvider({ baseUrl: server.baseUrl, apiKey: 'sk-test', transport });
        cleanups.push(() => provider.close());
        const { text, error } = await collectEvents(provider, request);
        expect(error).toBeNull();
        expect(text).toBe(defaultFakeText);
      }
      expect(proxy.seen).toEqual([`127.0.0.1:${port}`, `127.0.0.1:${port}`, `127.0.0.1:${port}`]);
      expect(server.wsConnections).toBe(1);
    });
  }

  it('reads NO_PROXY the same for SSE and the Responses WebSocket: a parent domain sends its subdomains around the proxy', async () => {
    const server = await FakeOpenAIServer.start();
    cleanups.push(() => server.close());
    // The proxy knows the name; this machine's DNS does not: only a tunnelled request can succeed.
    const proxy = await startProxy({ 'api.provider.test': '127.0.0.1' });
    const baseUrl = `http://api.provider.test:${new URL(server.baseUrl).port}/v1`;
    const connections = () => [
      chat(baseUrl),
      ...(['sse', 'websocket'] as const).map((transport) => {
        const provider = new ResponsesProvider({ baseUrl, apiKey: 'sk-test', transport });
        cleanups.push(() => provider.close());
        return provider;
      }),
    ];

    proxyEnvironment({ HTTP_PROXY: proxy.url, NO_PROXY: 'localhost,other.test' });
    for (const provider of connections()) expect((await collectEvents(provider, request)).text).toBe(defaultFakeText);
    expect(proxy.seen).toEqual(Array(3).fill(new URL(baseUrl).host));

    for (const noProxy of ['provider.test', '.provider.test', `api.provider.test:${new URL(baseUrl).port}`]) {
      proxyEnvironment({ HTTP_PROXY: proxy.url, NO_PROXY: noProxy });
      for (const provider of connections()) expect((await collectEvents(provider, request)).error).toMatchObject({ code: 'network' });
    }
    expect(proxy.seen).toHaveLength(3);
    expect(server.requests).toHaveLength(3);
  });

  it('speaks HTTP/2 inside the HTTPS_PROXY tunnel to an endpoint that offers only h2', async () => {
    const server = http2.createSecureServer({ key, cert, allowHTTP1: false });
    const { seen, listener } = recording(streamText);
    server.on('request', listener);
    const port = await listen(server);
    const proxy = await startProxy();
    proxyEnvironment({ HTTPS_PROXY: proxy.url });
    const provider = chat(`https://localhost:${port}/v1`, { ca: cert });
    for (let i = 0; i < 2; i++) {
      const { text, error } = await collectEvents(provider, request);
      expect(error).toBeNull();
      expect(text).toBe('Hello, world');
    }
    expect(seen.map((s) => s.httpVersion)).toEqual(['2.0', '2.0']);
    // One tunnel, one h2 session: the second request shared it.
    expect(proxy.seen).toEqual([`localhost:${port}`]);
  });

  it('refuses a SOCKS proxy as a configuration error, for SSE and the WebSocket alike, sending nothing', async () => {
    const server = await FakeOpenAIServer.start();
    cleanups.push(() => server.close());
    proxyEnvironment({ ALL_PROXY: 'socks5://127.0.0.1:1080' });
    expect(await failureOf(chat(server.baseUrl))).toMatchObject({ code: 'not_configured', message: expect.stringMatching(/ALL_PROXY names a socks5 proxy/) });
    const provider = new ResponsesProvider({ baseUrl: server.baseUrl, apiKey: 'sk-test', transport: 'websocket' });
    cleanups.push(() => provider.close());
    expect(await failureOf(provider)).toMatchObject({ code: 'not_configured' });
    expect(server.tcpConnections).toBe(0);
  });

  it('says so when the proxy cannot be reached', async () => {
    const proxy = await startProxy();
    const gone = proxy.url;
    await proxy.close();
    proxyEnvironment({ HTTPS_PROXY: gone });
    const error = await failureOf(chat('https://localhost:9/v1'));
    expect(error.code).toBe('network');
  });

  for (const encoding of ['gzip', 'br'] as const) {
    it(`reads ${encoding}-compressed SSE event by event, as the server flushes each`, async () => {
      let sendRest = (): void => undefined;
      const { seen, listener } = recording((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': encoding });
        const compress = encoding === 'gzip' ? zlib.createGzip() : zlib.createBrotliCompress();
        compress.pipe(res as http.ServerResponse);
        compress.write(event('first '));
        compress.flush();
        sendRest = () => compress.end(event('second') + finalEvents);
      });
      const port = await listen(http.createServer(listener));
      const texts: string[] = [];
      for await (const item of chat(`http://127.0.0.1:${port}/v1`).stream(request, new AbortController().signal)) {
        if (item.type !== 'text') continue;
        texts.push(item.text);
        // The first event came before the server wrote the rest: read as it arrived, not at the end.
        if (texts.length === 1) sendRest();
      }
      expect(texts.join('')).toBe('first second');
      expect(texts[0]).toBe('first ');
      expect(seen[0]!.headers['accept-encoding']).toMatch(encoding);
    });
  }

  it('reports a compressed body that does not decompress as bad_response', async () => {
    const { listener } = recording((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
      res.end('this is not gzip at all, though the header says so');
    });
    const port = await listen(http.createServer(listener));
    expect((await failureOf(chat(`http://127.0.0.1:${port}/v1`))).code).toBe('bad_response');
  });

  it('speaks HTTP/2 to an endpoint that offers only h2, and keeps its connection for the next request', async () => {
    const server = http2.createSecureServer({ key, cert, allowHTTP1: false });
    let sessions = 0;
    server.on('session', () => sessions++);
    const { seen, listener } = recording(streamText);
    server.on('request', listener);
    const port = await listen(server);
    const provider = chat(`https://localhost:${port}/v1`, { ca: cert, apiKey: 'sk-h2' });
    for (let i = 0; i < 3; i++) expect((await collectEvents(provider, request)).text).toBe('Hello, world');
    expect(seen.map((s) => s.httpVersion)).toEqual(['2.0', '2.0', '2.0']);
    expect(seen[0]!.headers.authorization).toBe('Bearer sk-h2');
    expect(JSON.parse(seen[0]!.body)).toMatchObject({ model: 'm', stream: true });
    expect(sessions).toBe(1);
  });

  it('follows a 307 with the same POST, and does not carry the key to another origin', async () => {
    const other = recording(streamText);
    const otherPort = await listen(http.createServer(other.listener));
    const { seen, listener } = recording((req, res) => {
      if (req.url === '/v1/chat/completions') res.writeHead(307, { location: '/v2/chat/completions' }).end();
      else if (req.url === '/v2/chat/completions') res.writeHead(307, { location: `http://127.0.0.1:${otherPort}/v3/chat/completions` }).end();
      else res.writeHead(404).end();
    });
    const port = await listen(http.createServer(listener));
    const { text, error } = await collectEvents(chat(`http://127.0.0.1:${port}/v1`, { apiKey: 'sk-secret' }), request);
    expect(error).toBeNull();
    expect(text).toBe('Hello, world');
    expect(seen.map((s) => [s.method, s.url, s.headers.authorization])).toEqual([
      ['POST', '/v1/chat/completions', 'Bearer sk-secret'],
      ['POST', '/v2/chat/completions', 'Bearer sk-secret'],
    ]);
    expect(other.seen.map((s) => [s.method, s.url, s.headers.authorization])).toEqual([['POST', '/v3/chat/completions', undefined]]);
    expect(JSON.parse(other.seen[0]!.body)).toMatchObject({ model: 'm', stream: true });
  });

  it('never sends a generation twice: a kept-alive socket dropped after the request reached the server fails as network', async () => {
    const { seen, listener } = recording((req, res, entry) => {
      if (seen.length === 2) {
        // The request arrived; the server goes away without answering (a restart, an idle close race).
        req.socket.destroy();
        return;
      }
      streamText(req, res, entry);
    });
    const server = http.createServer({ keepAliveTimeout: 60_000 }, listener);
    const port = await listen(server);
    const provider = chat(`http://127.0.0.1:${port}/v1`);
    expect((await collectEvents(provider, request)).text).toBe('Hello, world');
    // A re-sent request would have been the server's third, answered: the turn would not fail.
    const error = await failureOf(provider);
    expect(error.code).toBe('network');
    expect(seen).toHaveLength(2);
  });

  it('refuses a certificate it does not trust, saying which and how to trust one', async () => {
    const { seen, listener } = recording(streamText);
    const port = await listen(https.createServer({ key, cert }, listener));
    const error = await failureOf(chat(`https://localhost:${port}/v1`));
    expect(error.code).toBe('network');
    expect(error.message).toMatch(/certificate was not accepted \(DEPTH_ZERO_SELF_SIGNED_CERT/);
    expect(error.message).toMatch(/NODE_EXTRA_CA_CERTS/);
    expect(seen).toHaveLength(0);
    // Trusted: by host name and by IP address (the certificate names both).
    for (const host of ['localhost', '127.0.0.1']) {
      expect((await collectEvents(chat(`https://${host}:${port}/v1`, { ca: cert }), request)).text).toBe('Hello, world');
    }
  });

  it('refuses a header value HTTP does not allow as a configuration error, sending nothing', async () => {
    const { seen, listener } = recording(streamText);
    const port = await listen(http.createServer(listener));
    const provider = new ChatCompletionsProvider({ baseUrl: `http://127.0.0.1:${port}/v1`, headers: { 'x-org': 'a\r\nx-injected: 1' } });
    cleanups.push(() => provider.close());
    expect((await failureOf(provider)).code).toBe('not_configured');
    expect(seen).toHaveLength(0);
  });
});
