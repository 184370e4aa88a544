import { createReadStream, existsSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';
import { contentSecurityPolicy } from './securityHeaders';

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.ttf': 'font/ttf',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
  '.map': 'application/json',
};

/**
 * Serves the built web app. Unknown paths that look like app routes get index.html (the app
 * routes /w/<id> itself); hashed assets are cached for good. Takes the path already
 * percent-decoded: the server answers malformed encoding before any handler sees it.
 * `pagePolicy`: pages get the IDE's Content-Security-Policy (off only for pages that are not
 * the IDE, such as the benchmarks' control pages, which talk to servers on other ports).
 */
export function createStaticHandler(root: string, { pagePolicy = true }: { pagePolicy?: boolean } = {}) {
  const base = resolve(root);
  const indexFile = join(base, 'index.html');
  return (req: IncomingMessage, res: ServerResponse, pathname: string): boolean => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    let file = resolve(base, '.' + pathname);
    if (file !== base && !file.startsWith(base + sep)) return false;
    if (!existsSync(file) || !statSync(file).isFile()) {
      if (extname(pathname) !== '') return false;
      file = indexFile;
      if (!existsSync(file)) {
        res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('The web app is not built. Run `npm run build` (npm start does it for you).\n');
        return true;
      }
    }
    const immutable = pathname.startsWith('/assets/');
    if (pagePolicy && extname(file) === '.html') res.setHeader('content-security-policy', contentSecurityPolicy(req.headers.host));
    res.writeHead(200, {
      'content-type': contentTypes[extname(file)] ?? 'application/octet-stream',
      'cache-control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
    });
    if (req.method === 'HEAD') res.end();
    else createReadStream(file).pipe(res);
    return true;
  };
}
