import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Gateway } from '../core/Gateway';
import { SqliteStore } from '../storage/SqliteStore';
import { startServer, type RunningServer } from './httpServer';
import { createStaticHandler } from './staticFiles';
import { systemClock } from './systemClock';
import { systemRandom } from './systemRandom';

/** The built web app as the gateway sends it, over real sockets on port 0, from real files. */
interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** node:http rather than fetch: fetch would decompress, and would not send `..` as given. */
function send(port: number, path: string, init: { method?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: init.method ?? 'GET', headers: init.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const top = mkdtempSync(join(tmpdir(), 'flint-static-'));
const webRoot = join(top, 'dist');
const page = '<!doctype html><title>Flint</title>' + '<p>Flint</p>'.repeat(50);
const script = 'export const answer = 42;\n'.repeat(50);
const style = 'body { color: red; }\n';
const browser = { 'accept-encoding': 'gzip, deflate, br, zstd' };

/** A file with the variants the build writes beside it. */
function writeCompressed(path: string, content: string): void {
  writeFileSync(path, content);
  writeFileSync(`${path}.br`, brotliCompressSync(content));
  writeFileSync(`${path}.gz`, gzipSync(content));
}

const servers: RunningServer[] = [];
const bareServers: Server[] = [];
let port: number;

async function serveGateway(root: string): Promise<number> {
  const gateway = new Gateway({ store: new SqliteStore(':memory:'), clock: systemClock, random: systemRandom });
  const server = await startServer({ gateway, port: 0, host: '127.0.0.1', webRoot: root, allowedOrigins: null, publicUrl: null, log: () => {} });
  servers.push(server);
  return server.port;
}

beforeAll(async () => {
  mkdirSync(join(webRoot, 'assets'), { recursive: true });
  writeCompressed(join(webRoot, 'index.html'), page);
  writeCompressed(join(webRoot, 'assets', 'index-Ab12_x.js'), script);
  writeFileSync(join(webRoot, 'assets', 'index-Cd34_y.css'), style);
  writeFileSync(join(webRoot, 'assets', 'icon-Ef56.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  writeFileSync(join(top, 'secret.txt'), 'not for the web');
  port = await serveGateway(webRoot);
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await Promise.all(bareServers.map((s) => new Promise((resolve) => s.close(resolve))));
  rmSync(top, { recursive: true, force: true });
});

describe('precompressed files', () => {
  it('sends the brotli file to a browser that accepts br, and says it varies by Accept-Encoding', async () => {
    const answer = await send(port, '/assets/index-Ab12_x.js', { headers: browser });
    expect(answer.status).toBe(200);
    expect(answer.headers).toMatchObject({ 'content-encoding': 'br', 'content-type': 'text/javascript', vary: 'Accept-Encoding' });
    expect(brotliDecompressSync(answer.body).toString()).toBe(script);
    expect(Number(answer.headers['content-length'])).toBe(answer.body.length);
    expect(answer.body.length).toBeLessThan(script.length);
  });

  it('sends the gzip file to a client that accepts only gzip', async () => {
    const answer = await send(port, '/assets/index-Ab12_x.js', { headers: { 'accept-encoding': 'gzip' } });
    expect(answer.headers).toMatchObject({ 'content-encoding': 'gzip', vary: 'Accept-Encoding' });
    expect(gunzipSync(answer.body).toString()).toBe(script);
  });

  it('sends the file itself to a client that accepts no encoding, or when no variant was written', async () => {
    const plain = await send(port, '/assets/index-Ab12_x.js');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toBe('Accept-Encoding');
    expect(plain.body.toString()).toBe(script);

    const noVariant = await send(port, '/assets/index-Cd34_y.css', { headers: browser });
    expect(noVariant.headers['content-encoding']).toBeUndefined();
    expect(noVariant.body.toString()).toBe(style);
  });

  it('names each file by its own type, whichever encoding is sent', async () => {
    expect((await send(port, '/', { headers: browser })).headers['content-type']).toMatch(/^text\/html;\s?charset=utf-8$/);
    expect((await send(port, '/assets/index-Cd34_y.css')).headers['content-type']).toBe('text/css');
    expect((await send(port, '/assets/icon-Ef56.svg')).headers['content-type']).toBe('image/svg+xml');
  });
});

describe('caching', () => {
  it('keeps hashed files under /assets/ for good, and has the page revalidated each time', async () => {
    expect((await send(port, '/assets/index-Ab12_x.js', { headers: browser })).headers['cache-control']).toBe('public, max-age=31536000, immutable');
    for (const path of ['/', '/index.html', '/w/abc123']) {
      expect((await send(port, path, { headers: browser })).headers['cache-control']).toBe('no-cache');
    }
  });

  it('answers 304 to the ETag it sent, with the same Vary and Cache-Control; each encoding has its own ETag', async () => {
    const first = await send(port, '/', { headers: browser });
    const etag = first.headers.etag ?? '';
    expect(etag).not.toBe('');
    const again = await send(port, '/', { headers: { ...browser, 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    expect(again.headers).toMatchObject({ vary: 'Accept-Encoding', 'cache-control': 'no-cache' });

    expect((await send(port, '/')).headers.etag).not.toBe(etag);
    expect((await send(port, '/', { headers: { ...browser, 'if-none-match': 'W/"0-0"' } })).status).toBe(200);
  });
});

describe('what is found where', () => {
  it('answers app routes (paths without an extension) with the page', async () => {
    const answer = await send(port, '/w/abc123', { headers: browser });
    expect(answer.status).toBe(200);
    expect(brotliDecompressSync(answer.body).toString()).toBe(page);
  });

  it.each(['/assets/index-Gone99.js', '/assets/chunk', '/nope.txt', '/missing.html'])('%s is a 404, not the page', async (path) => {
    const answer = await send(port, path, { headers: browser });
    expect(answer.status).toBe(404);
    expect(answer.headers['cache-control']).toBeUndefined();
    expect(answer.headers['content-security-policy']).toBeUndefined();
  });

  it.each(['/../secret.txt', '/%2e%2e/secret.txt', '/assets/..%2f..%2f..%2fsecret.txt', '/assets/%2e%2e/%2e%2e/secret.txt'])(
    '%s does not leave the web root',
    async (path) => {
      const answer = await send(port, path);
      expect(answer.status).toBe(404);
      expect(answer.body.toString()).not.toContain('not for the web');
    },
  );

  it('answers HEAD with the headers alone, and leaves other methods to the rest of the server', async () => {
    const head = await send(port, '/assets/index-Ab12_x.js', { method: 'HEAD', headers: browser });
    expect(head).toMatchObject({ status: 200, headers: { 'content-encoding': 'br' } });
    expect(head.body.length).toBe(0);
    expect((await send(port, '/assets/index-Ab12_x.js', { method: 'POST' })).status).toBe(404);
  });

  it('says the app is not built, and serves it once it is, without a restart', async () => {
    const laterRoot = join(top, 'later');
    const later = await serveGateway(laterRoot);
    const before = await send(later, '/w/abc123');
    expect(before.status).toBe(503);
    expect(before.body.toString()).toContain('npm run build');
    expect((await send(later, '/assets/index-Ab12_x.js')).status).toBe(404);

    mkdirSync(laterRoot);
    writeFileSync(join(laterRoot, 'index.html'), page);
    expect(await send(later, '/w/abc123')).toMatchObject({ status: 200, body: Buffer.from(page) });
  });
});

describe('Content-Security-Policy', () => {
  it('is sent with the page, whichever path it answers, and not with other files', async () => {
    for (const path of ['/', '/index.html', '/w/abc123']) {
      expect((await send(port, path)).headers['content-security-policy']).toContain("default-src 'self'");
    }
    expect((await send(port, '/assets/index-Ab12_x.js')).headers['content-security-policy']).toBeUndefined();
  });

  it('is left out for pages that are not the IDE (pagePolicy: false)', async () => {
    const serve = createStaticHandler(webRoot, { pagePolicy: false });
    const server = createServer((req, res) => {
      if (!serve(req, res, new URL(req.url ?? '/', 'http://x').pathname)) res.writeHead(404).end();
    });
    bareServers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const answer = await send((server.address() as AddressInfo).port, '/');
    expect(answer.status).toBe(200);
    expect(answer.headers['content-security-policy']).toBeUndefined();
  });
});
