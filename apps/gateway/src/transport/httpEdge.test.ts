import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { Gateway } from '../core/Gateway';
import type { Log } from '../core/ports/Log';
import { SqliteStore } from '../storage/SqliteStore';
import { startServer, type RunningServer, type ServerOptions } from './httpServer';
import { systemClock } from './systemClock';
import { systemRandom } from './systemRandom';

/** The gateway's HTTP edge over real sockets on port 0: what it answers to input it must not trust. */
interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** node:http rather than fetch: fetch would not send a forged Host or a malformed path as given. */
function send(port: number, path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    // A fresh connection each: a kept-alive one the server is closing would fail the next request.
    const req = request({ host: '127.0.0.1', port, path, method: init.method ?? 'GET', headers: init.headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

function upgradeStatus(ws: WebSocket): Promise<number> {
  return new Promise((resolve) => {
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.on('open', () => resolve(101));
  });
}

const json = { 'content-type': 'application/json' };
const webRoot = mkdtempSync(join(tmpdir(), 'flint-web-'));
const logged: Array<{ level: string; message: string }> = [];
const servers: RunningServer[] = [];
let port: number;

async function serve(options: Partial<ServerOptions> = {}): Promise<number> {
  const gateway = new Gateway({ store: new SqliteStore(':memory:'), clock: systemClock, random: systemRandom });
  const log: Log = (level, message) => logged.push({ level, message });
  const server = await startServer({ gateway, port: 0, host: '127.0.0.1', webRoot, allowedOrigins: null, publicUrl: null, log, ...options });
  servers.push(server);
  return server.port;
}

beforeAll(async () => {
  writeFileSync(join(webRoot, 'index.html'), '<!doctype html><title>Flint</title>');
  mkdirSync(join(webRoot, 'assets'));
  writeFileSync(join(webRoot, 'assets', 'app.js'), 'export {};');
  port = await serve();
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  rmSync(webRoot, { recursive: true, force: true });
});

describe('malformed URLs', () => {
  it.each(['/%E0%A4%A', '/%c0%ae%c0%ae/package.json', '/assets/%ff.js', '/api/workspaces/%E0%A4%A/links'])(
    '%s is a 400 with a sentence, not an internal error, and nothing is logged',
    async (path) => {
      logged.length = 0;
      const answer = await send(port, path);
      expect(answer.status).toBe(400);
      expect(answer.body).toMatch(/percent-encoding/);
      expect(logged).toEqual([]);
    },
  );

  it('a request target that is not a path is a 400', async () => {
    expect((await send(port, '*', { method: 'OPTIONS' })).status).toBe(400);
    expect((await send(port, 'http://127.0.0.1/healthz')).status).toBe(400);
  });

  it('a path that `new URL` cannot parse is answered like any other, and the gateway goes on serving', async () => {
    expect((await send(port, '//[')).status).toBe(200);
    expect(await upgradeStatus(new WebSocket(`ws://127.0.0.1:${port}//[`))).toBe(404);
    expect((await send(port, '/healthz')).status).toBe(200);
  });

  it('well-formed percent-encoding still finds the file', async () => {
    const answer = await send(port, '/assets/app%2Ejs');
    expect(answer).toMatchObject({ status: 200, body: 'export {};' });
  });
});

describe('[P18] Host: a loopback gateway answers only to its own names (DNS rebinding)', () => {
  it.each(['/', '/healthz', '/api/workspaces'])('%s for Host evil.example is a 403 that says what to do', async (path) => {
    const post = path === '/api/workspaces';
    const answer = await send(port, path, post ? { method: 'POST', headers: { host: 'evil.example', ...json }, body: '{}' } : { headers: { host: 'evil.example' } });
    expect(answer.status).toBe(403);
    expect(answer.body).toMatch(/"evil\.example".*FLINT_PUBLIC_URL/);
  });

  it('refuses the upgrade for a foreign Host even when the Origin matches it', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { headers: { host: `evil.example:${port}`, origin: `http://evil.example:${port}` } });
    expect(await upgradeStatus(ws)).toBe(403);
  });

  it('answers to localhost and its subdomains', async () => {
    expect((await send(port, '/healthz', { headers: { host: `localhost:${port}` } })).status).toBe(200);
    expect((await send(port, '/healthz', { headers: { host: `ide.localhost:${port}` } })).status).toBe(200);
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { headers: { host: `localhost:${port}`, origin: `http://localhost:${port}` } });
    expect(await upgradeStatus(ws)).toBe(101);
    ws.close();
  });

  it("answers to FLINT_PUBLIC_URL's host, and opens the socket to a page on a FLINT_ALLOWED_ORIGINS origin", async () => {
    const proxied = await serve({ publicUrl: 'https://flint.example.com', allowedOrigins: ['https://ide.example.org'] });
    expect((await send(proxied, '/healthz', { headers: { host: 'flint.example.com' } })).status).toBe(200);
    expect((await send(proxied, '/healthz', { headers: { host: 'evil.example' } })).status).toBe(403);
    const ws = new WebSocket(`ws://127.0.0.1:${proxied}/ws`, { headers: { host: 'ide.example.org', origin: 'https://ide.example.org' } });
    expect(await upgradeStatus(ws)).toBe(101);
    ws.close();
  });
});

describe('REST requests a browser could send cross-site without asking', () => {
  it.each([
    ['text/plain', '{"name":"csrf"}'],
    ['application/x-www-form-urlencoded', 'name=csrf'],
    ['multipart/form-data; boundary=x', '--x--'],
  ])('creating a workspace with a %s body is a 415', async (contentType, body) => {
    const answer = await send(port, '/api/workspaces', { method: 'POST', headers: { 'content-type': contentType }, body });
    expect(answer.status).toBe(415);
    expect(JSON.parse(answer.body)).toEqual({ error: expect.stringMatching(/Content-Type: application\/json/) });
  });

  it('a POST without a body or a Content-Type is a 415 too: it needs no preflight either', async () => {
    expect((await send(port, '/api/workspaces', { method: 'POST' })).status).toBe(415);
  });

  it('a link request with a body that is not JSON is a 415 before anything else is looked at', async () => {
    const answer = await send(port, '/api/workspaces/w1/links', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{"role":"editor"}' });
    expect(answer.status).toBe(415);
  });

  it('JSON with a charset parameter is JSON', async () => {
    const answer = await send(port, '/api/workspaces', { method: 'POST', headers: { 'content-type': 'Application/JSON; charset=utf-8' }, body: '{}' });
    expect(answer.status).toBe(201);
  });
});

describe('FLINT_CREATE_TOKEN', () => {
  let guarded: number;
  beforeAll(async () => {
    guarded = await serve({ createToken: 'operator-secret' });
  });

  it('without it, or with another token, creating a workspace is a 401 that names the setting', async () => {
    for (const authorization of [undefined, 'Bearer operator-secreT', 'Bearer operator-secret-and-more', 'operator-secret']) {
      const headers = { ...json, ...(authorization ? { authorization } : {}) };
      const answer = await send(guarded, '/api/workspaces', { method: 'POST', headers, body: '{}' });
      expect(answer.status).toBe(401);
      expect(JSON.parse(answer.body)).toEqual({ error: expect.stringMatching(/FLINT_CREATE_TOKEN/) });
    }
  });

  it('with it, the workspace is created, and its owner link works as always', async () => {
    const created = await send(guarded, '/api/workspaces', { method: 'POST', headers: { ...json, authorization: 'Bearer operator-secret' }, body: '{}' });
    expect(created.status).toBe(201);
    const { workspaceId, url } = JSON.parse(created.body) as { workspaceId: string; url: string };
    const ownerToken = new URL(url).hash.replace('#token=', '');
    const links = await send(guarded, `/api/workspaces/${workspaceId}/links`, { headers: { authorization: `Bearer ${ownerToken}` } });
    expect(links.status).toBe(200);
  });
});

describe('security headers', () => {
  it.each([
    ['the IDE page', '/w/anything', {}],
    ['a file', '/assets/app.js', {}],
    ['health', '/healthz', {}],
    ['an API error', '/api/workspaces', { method: 'POST' }],
    ['a 404', '/nope.txt', {}],
    ['a 400', '/%E0%A4%A', {}],
    ['a 403', '/', { headers: { host: 'evil.example' } }],
  ] as const)('%s is sent with nosniff, no framing and no referrer', async (_what, path, init) => {
    const { headers } = await send(port, path, init);
    expect(headers).toMatchObject({ 'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY', 'referrer-policy': 'no-referrer' });
  });

  it('the IDE page carries a Content-Security-Policy that allows only its own origin', async () => {
    const answer = await send(port, '/w/anything');
    expect(answer.headers['content-type']).toMatch(/^text\/html/);
    const policy = answer.headers['content-security-policy'];
    expect(policy).toContain("default-src 'self'");
    expect(policy).toContain("script-src 'self';");
    expect(policy).toContain(`connect-src 'self' ws://127.0.0.1:${port} wss://127.0.0.1:${port}`);
    expect(policy).toContain("object-src 'none'");
    expect(policy).toContain("base-uri 'none'");
    expect(policy).toContain("frame-ancestors 'none'");
  });
});
