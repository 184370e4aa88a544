import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { CloseCode } from '@flint/protocol';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Gateway } from '../core/Gateway';
import type { Log } from '../core/GatewayContext';
import { createRestApi } from './restApi';
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
  log: Log;
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
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

const heartbeatMs = 30_000;

/** The one HTTP server: web app, REST API, health, metrics and the WebSocket endpoint `/ws`. */
export function startServer(options: ServerOptions): Promise<RunningServer> {
  const { gateway, log } = options;
  const serveStatic = createStaticHandler(options.webRoot);
  const restApi = createRestApi(gateway, options.publicUrl);

  const server = createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (pathname === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, sessions: gateway.sessionCount }));
      return;
    }
    if (pathname === '/metrics') {
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
      res.end(gateway.metrics.render());
      return;
    }
    restApi(req, res, pathname)
      .then((handled) => {
        if (handled || serveStatic(req, res, pathname)) return;
        res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('Not found\n');
      })
      .catch((error: unknown) => {
        log('error', 'request failed', { pathname, error: String(error) });
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'The gateway hit an internal error.' }));
      });
  });

  const wss = new WebSocketServer({
    noServer: true,
    // A backstop only: the core checks maxFrameBytes itself and closes with FrameTooLarge.
    maxPayload: gateway.config.limits.maxFrameBytes * 2,
    perMessageDeflate: false,
  });
  const alive = new WeakMap<WebSocket, boolean>();

  server.on('upgrade', (req, socket, head) => {
    const pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (pathname !== '/ws') {
      socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\n\r\n');
      return;
    }
    if (!originAllowed(req, options.allowedOrigins)) {
      gateway.metrics.inc('flint_origin_refused_total');
      socket.end('HTTP/1.1 403 Forbidden\r\nconnection: close\r\ncontent-type: text/plain\r\n\r\nOrigin not allowed\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => attach(ws, socket));
  });

  function attach(ws: WebSocket, socket: Duplex): void {
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
    ws.on('error', (error) => log('warn', 'websocket error', { error: String(error) }));
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
