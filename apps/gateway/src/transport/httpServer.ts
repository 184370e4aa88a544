import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { CloseCode } from '@flint/protocol';
import { WebSocket, WebSocketServer } from 'ws';
import { noModels, readiness as readinessOf, type Readiness } from '../core/agent/ModelRouter';
import type { Gateway } from '../core/Gateway';
import type { Log } from '../core/ports/Log';
import type { ProjectRegistry } from '../project/FolderProject';
import { createHostCheck } from './hostCheck';
import { createRestApi, type RestRoute } from './restApi';
import { securityHeaders } from './securityHeaders';
import { createStaticHandler } from './staticFiles';

export interface ServerOptions {
  gateway: Gateway;
  port: number;
  host: string;
  /** The built web app (apps/web/dist). */
  webRoot: string;
  /** Origins allowed to open the WebSocket; null: only the gateway's own host. */
  allowedOrigins: string[] | null;
  publicUrl: string | null;
  /** When set, creating a workspace over REST needs it as a Bearer token (`FLINT_CREATE_TOKEN`). */
  createToken?: string | null;
  log: Log;
  /**
   * What `/readyz` reports: the core's `readiness` of the gateway's routes (unset: no models),
   * or in a cluster its dependencies too; given the request's query (`?redis=optional`).
   */
  readiness?: (query: URLSearchParams) => Readiness | Promise<Readiness>;
  /** The folder projects this gateway serves (issue 24), for the project REST routes. Unset: none. */
  projects?: ProjectRegistry;
  /**
   * Behind a balancer (`FLINT_TRUST_PROXY=1`): a client's address is the last X-Forwarded-For
   * entry (the one the balancer added), not the balancer's own; per-address caps count it.
   */
  trustProxy?: boolean;
  /** More REST routes (workspaceModelApi.ts, playgroundApi.ts), tried before the project routes. */
  routes?: ReadonlyArray<RestRoute>;
}

/** The client's address for per-address caps: the socket's, or the balancer's record of it. */
export function clientAddress(req: IncomingMessage, trustProxy: boolean): string {
  const forwarded = trustProxy ? req.headers['x-forwarded-for'] : undefined;
  const last = (Array.isArray(forwarded) ? forwarded.join(',') : (forwarded ?? '')).split(',').pop()?.trim();
  return last || (req.socket.remoteAddress ?? '');
}

export interface RunningServer {
  server: Server;
  port: number;
  url: string;
  close(): Promise<void>;
}

/** Browsers always send Origin on a WebSocket; tools and tests that send none are not browsers. */
export function originAllowed(req: IncomingMessage, allowedOrigins: string[] | null): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  if (allowedOrigins !== null) return allowedOrigins.includes(origin);
  try {
    return new URL(origin).host === req.headers.host?.toLowerCase();
  } catch {
    return false;
  }
}

/**
 * The path of a request target, raw and percent-decoded; null when it is not a usable path.
 * No `new URL(req.url)`: it throws on targets such as `//[`, and a throw in a request or upgrade
 * listener ends the process.
 */
export function requestPath(target: string | undefined): { raw: string; decoded: string } | null {
  if (target === undefined || !target.startsWith('/')) return null;
  const end = target.search(/[?#]/);
  const raw = end === -1 ? target : target.slice(0, end);
  try {
    return { raw, decoded: decodeURIComponent(raw) };
  } catch {
    // Malformed percent-encoding (`/%E0%A4%A`): the caller answers 400.
    return null;
  }
}

const badPathMessage = 'The URL is malformed: its path must start with "/" and use valid percent-encoding (UTF-8 bytes as %XX).\n';

function blockedHostMessage(hostHeader: string | undefined): string {
  return (
    `Blocked request: this gateway does not answer to the host ${JSON.stringify(hostHeader ?? '')}. ` +
    'Open it at its own address (localhost), or name this host in FLINT_PUBLIC_URL or FLINT_ALLOWED_ORIGINS.\n'
  );
}

/** Answers an upgrade request it will not take, on the raw socket (no ServerResponse exists yet). */
function refuseUpgrade(socket: Duplex, status: string, message: string): void {
  const headers = Object.entries({ ...securityHeaders, connection: 'close', 'content-type': 'text/plain; charset=utf-8' });
  socket.end(`HTTP/1.1 ${status}\r\n${headers.map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n${message}`);
}

const noReadiness = () => readinessOf(noModels);

const heartbeatMs = 30_000;
const messageTooBig = 1009;

/**
 * ws closes a socket with 1009 (RFC 6455's Message Too Big) as soon as a frame's header, or a
 * message's fragments together, pass `maxPayload`, and reads nothing more from it. On Flint's wire
 * that close is 4413 [P12]; ws makes the close through this method, so here is where it is named.
 * (The other way, `maxPayload` far above the limit and the core's check alone, would have ws
 * buffer whatever a client announces before anyone looks at its size.)
 */
class FlintWebSocket extends WebSocket {
  override close(code?: number, reason?: string | Buffer): void {
    if (code === messageTooBig) super.close(CloseCode.FrameTooLarge, 'frame too large');
    else super.close(code, reason);
  }
}

/** The one HTTP server: web app, REST API, health, metrics and the WebSocket endpoint `/ws`. */
export function startServer(options: ServerOptions): Promise<RunningServer> {
  const { gateway, log } = options;
  const serveStatic = createStaticHandler(options.webRoot);
  const restApi = createRestApi(gateway, { publicUrl: options.publicUrl, createToken: options.createToken ?? null, projects: options.projects, log, routes: options.routes });
  const hostAllowed = createHostCheck({ bindHost: options.host, publicUrl: options.publicUrl, allowedOrigins: options.allowedOrigins });
  gateway.metrics.describe('flint_host_refused_total', 'HTTP requests and WebSocket upgrades refused for a Host that is not the gateway (DNS rebinding).');

  const server = createServer((req, res) => {
    for (const [name, value] of Object.entries(securityHeaders)) res.setHeader(name, value);
    const text = (status: number, body: string) => {
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(body);
    };
    if (!hostAllowed(req.headers.host)) {
      gateway.metrics.inc('flint_host_refused_total');
      return text(403, blockedHostMessage(req.headers.host));
    }
    const path = requestPath(req.url);
    if (path === null) return text(400, badPathMessage);
    if (path.raw === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, gateway: gateway.cluster.gatewayId, sessions: gateway.sessionCount }));
      return;
    }
    // Liveness above, readiness here: a balancer takes the gateway out while its fast route is refused.
    if (path.raw === '/readyz') {
      const query = new URL(req.url ?? '/', 'http://gateway').searchParams;
      Promise.resolve((options.readiness ?? noReadiness)(query)).then(
        (view) => {
          res.writeHead(view.ready ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' });
          res.end(JSON.stringify(view));
        },
        (error: unknown) => {
          log('error', 'readiness check failed', { error: String(error) });
          res.writeHead(503, { 'content-type': 'application/json', 'cache-control': 'no-store' });
          res.end(JSON.stringify({ ready: false, error: 'The readiness check failed; see the gateway log.' }));
        },
      );
      return;
    }
    if (path.raw === '/metrics') {
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
      res.end(gateway.metrics.render());
      return;
    }
    // The API matches the raw path (its ids are never encoded); files are found by the decoded one.
    restApi(req, res, path.raw)
      .then((handled) => {
        if (handled || serveStatic(req, res, path.decoded)) return;
        text(404, 'Not found\n');
      })
      .catch((error: unknown) => {
        log('error', 'request failed', { pathname: path.raw, error: String(error) });
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'The gateway hit an internal error.' }));
      });
  });

  const wss = new WebSocketServer<typeof FlintWebSocket>({
    noServer: true,
    WebSocket: FlintWebSocket,
    maxPayload: gateway.config.limits.maxFrameBytes,
    perMessageDeflate: false,
  });
  const alive = new WeakMap<WebSocket, boolean>();

  server.on('upgrade', (req, socket, head) => {
    if (!hostAllowed(req.headers.host)) {
      gateway.metrics.inc('flint_host_refused_total');
      refuseUpgrade(socket, '403 Forbidden', blockedHostMessage(req.headers.host));
      return;
    }
    if (requestPath(req.url)?.raw !== '/ws') {
      refuseUpgrade(socket, '404 Not Found', 'Not found\n');
      return;
    }
    if (!originAllowed(req, options.allowedOrigins)) {
      gateway.metrics.inc('flint_origin_refused_total');
      refuseUpgrade(socket, '403 Forbidden', 'Origin not allowed\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => attach(ws, socket, clientAddress(req, options.trustProxy ?? false)));
  });

  function attach(ws: WebSocket, socket: Duplex, remoteAddress: string): void {
    alive.set(ws, true);
    ws.on('pong', () => alive.set(ws, true));
    // Frames sent to one socket in the same event-loop turn (an agent flush's doc update, its
    // cursor and status) leave in one write: one syscall, and on loopback one wake-up of the reader.
    let corked = false;
    const uncork = () => {
      corked = false;
      socket.uncork();
    };
    const connection = gateway.connect({
      send: (data) => {
        if (!corked) {
          corked = true;
          socket.cork();
          process.nextTick(uncork);
        }
        ws.send(data);
      },
      close: (code, reason) => ws.close(code, reason),
      get isOpen() {
        return ws.readyState === ws.OPEN;
      },
      get bufferedBytes() {
        return ws.bufferedAmount;
      },
      remoteAddress,
    });
    socket.on('drain', () => connection.drained());
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (!isBinary) {
        ws.close(CloseCode.MalformedFrame, 'text frames are not part of the protocol');
        connection.closed();
        return;
      }
      connection.receive(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    });
    ws.on('close', () => connection.closed());
    ws.on('error', (error: Error & { code?: string }) => {
      // A frame over the limit is the client's fault, already answered with 4413 (FlintWebSocket).
      if (error.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') gateway.metrics.inc('flint_session_closes_total', { code: CloseCode.FrameTooLarge });
      else log('warn', 'websocket error', { error: String(error) });
    });
  }

  // Finds connections whose peer vanished without a close (a laptop lid, a dead network).
  const heartbeat = setInterval(() => {
    for (const ws of wss.clients) {
      if (!alive.get(ws)) {
        ws.terminate();
        continue;
      }
      alive.set(ws, false);
      ws.ping();
    }
  }, heartbeatMs);
  heartbeat.unref();

  return new Promise((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      const { port } = server.address() as AddressInfo;
      const host = options.host === '0.0.0.0' || options.host === '::' ? 'localhost' : options.host;
      resolvePromise({
        server,
        port,
        url: options.publicUrl ?? `http://${host}:${port}`,
        close: () =>
          new Promise<void>((done) => {
            clearInterval(heartbeat);
            gateway.shutdown();
            for (const ws of wss.clients) ws.terminate();
            wss.close();
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
