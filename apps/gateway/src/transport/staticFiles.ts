import { existsSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';
import sirv from 'sirv';
import { contentSecurityPolicy } from './securityHeaders';

const notBuiltMessage = 'The web app is not built. Run `npm run build` (npm start does it for you).\n';

/**
 * Serves the built web app through sirv. The build writes `.br` and `.gz` beside each text file
 * (apps/web/vite.config.ts); sirv sends the one the browser accepts, with an ETag of its own, and
 * a 304 to a browser that already holds it. Hashed files under /assets/ are cached for good; the rest,
 * index.html first, is revalidated each time. Paths without an extension are app routes (the app
 * routes /w/<id> itself) and get index.html; a missing file is not answered here (`false`).
 * Takes the path already percent-decoded: the server answers malformed encoding before any
 * handler sees it. `pagePolicy`: pages get the IDE's Content-Security-Policy (off only for pages
 * that are not the IDE, such as the benchmarks' control pages, which talk to servers on other ports).
 */
export function createStaticHandler(root: string, { pagePolicy = true }: { pagePolicy?: boolean } = {}) {
  const base = resolve(root);
  // sirv's dev mode looks each file up on disk rather than in a list taken at start, so a
  // rebuild under a running gateway is served as built, and a gateway started before the build
  // serves it once it exists.
  const files = sirv(base, { dev: true, etag: true, brotli: true, gzip: true, extensions: ['html'] });

  /** Whether sirv answered: it calls `next` (synchronously) when it has no such file. */
  const serveFile = (req: IncomingMessage, res: ServerResponse, path: string): boolean => {
    let found = true;
    files(asRequestFor(req, path), res, () => {
      found = false;
    });
    return found;
  };

  return (req: IncomingMessage, res: ServerResponse, pathname: string): boolean => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const file = resolve(base, '.' + pathname);
    if (file !== base && !file.startsWith(base + sep)) return false;
    const path = file.slice(base.length).split(sep).join('/') || '/';
    const isAsset = path.startsWith('/assets/');
    // A missing hashed file is a 404, never the page: a stale page asking for it must fail loudly.
    const isRoute = extname(path) === '' && !isAsset;
    const isPage = isRoute || extname(path) === '.html';

    // Set before sirv answers, so that a 304 carries them too (RFC 9110 §15.4.5).
    const headers: Record<string, string> = {
      'cache-control': isAsset ? 'public, max-age=31536000, immutable' : 'no-cache',
      vary: 'Accept-Encoding',
    };
    if (pagePolicy && isPage) headers['content-security-policy'] = contentSecurityPolicy(req.headers.host);
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);

    if (serveFile(req, res, path) || (isRoute && serveFile(req, res, '/index.html'))) return true;
    if (isRoute && !existsSync(join(base, 'index.html'))) {
      res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
      res.end(notBuiltMessage);
      return true;
    }
    for (const name of Object.keys(headers)) res.removeHeader(name);
    return false;
  };
}

/**
 * The request as sirv reads it (only its url and headers): its url is the path the server decoded
 * and this handler confined to the root, encoded again because sirv decodes the url it reads.
 * `?` and `#` are escaped too, or sirv would cut the path there.
 */
function asRequestFor(req: IncomingMessage, path: string): IncomingMessage {
  const url = encodeURI(path).replace(/[?#]/g, encodeURIComponent);
  return { url, headers: req.headers } as IncomingMessage;
}
