/**
 * A loopback stand-in for an OpenAI-compatible server that speaks the real wire formats:
 * POST /v1/chat/completions (SSE), POST /v1/responses (SSE) and the Responses WebSocket mode at
 * /v1/responses, on one port. Tests script what it answers (text, pacing, faults) and read back
 * what it saw (bodies, headers, TCP connections, whether the client hung up mid-stream).
 * A script can hold its answer back mid-stream (`holdAfterChunks`) until the test calls `release()`.
 *
 * @example
 * const server = await FakeOpenAIServer.start();
 * server.respondOnceWith({ fault: fakeFaults.rateLimited({ retryAfterS: 2 }) });
 * // ... point an adapter at server.baseUrl ...
 * await server.close();
 */
import { EventEmitter } from 'node:events';
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { defaultFakeText, type FakeFault, type FakeScript } from './FakeScript';
import { playWire, type PlayOutcome } from './playWire';
import { waitForChange } from './waitForChange';
import { sseSink, webSocketSink } from './wireSinks';
import { chatCompletionWire, responsesWire } from './WireEvent';

export interface RecordedRequest {
  transport: 'http' | 'ws';
  path: string;
  headers: IncomingHttpHeaders;
  /** The JSON body (WebSocket: the whole client message, `type` included). */
  body: Record<string, unknown>;
  /** Which TCP connection carried it (numbered from 1 in the order they were accepted). */
  connectionId: number;
  /** Responses: the id of the response it got, which a continuation names as previous_response_id. */
  responseId?: string;
  /** 'pending' while streaming; 'client-closed' proves a cancellation reached the server. */
  outcome: 'pending' | PlayOutcome | 'refused';
}

interface WsConnection {
  id: number;
  ws: WebSocket;
  /** Response ids this connection can continue from even with `store: false`. */
  localIds: Set<string>;
  busy: boolean;
  /** Answers the next response.create with `websocket_connection_limit_reached`. */
  expired: boolean;
}

export class FakeOpenAIServer {
  readonly requests: RecordedRequest[] = [];
  /** TCP connections accepted so far, HTTP and WebSocket alike. */
  tcpConnections = 0;
  /** WebSocket connections upgraded so far. */
  wsConnections = 0;
  /** Answer WebSocket upgrades with this HTTP status instead of 101 (e.g. 404: no WS mode). */
  refuseUpgradeStatus: number | null = null;
  private defaultScript: FakeScript | (() => Partial<FakeScript>) = { text: defaultFakeText };
  private readonly queue: Array<Partial<FakeScript> | (() => Partial<FakeScript>)> = [];
  private readonly byModel = new Map<string, FakeScript>();
  private readonly storedIds = new Set<string>();
  private readonly sockets = new Map<Socket, number>();
  private readonly openWebSockets = new Set<WsConnection>();
  private readonly changes = new EventEmitter();
  private readonly holds = new Set<() => void>();
  private nextResponse = 1;

  private constructor(
    private readonly server: http.Server,
    private readonly wss: WebSocketServer,
  ) {}

  static async start(): Promise<FakeOpenAIServer> {
    const server = http.createServer();
    const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
    const fake = new FakeOpenAIServer(server, wss);
    server.on('connection', (socket: Socket) => {
      fake.sockets.set(socket, ++fake.tcpConnections);
      socket.once('close', () => fake.sockets.delete(socket));
      fake.changed();
    });
    server.on('request', (req, res) => void fake.onRequest(req, res));
    server.on('upgrade', (req, socket: Socket, head) => fake.onUpgrade(req, socket, head));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  /** e.g. http://127.0.0.1:54321/v1 — what adapters take as their base URL. */
  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  /**
   * What every request gets unless one was queued with `respondOnceWith`; a function is called
   * per request, when it arrives.
   */
  respondWith(script: Partial<FakeScript> | (() => Partial<FakeScript>)): void {
    this.defaultScript = typeof script === 'function' ? script : { text: defaultFakeText, ...script };
  }

  /** What every request for `model` gets (two routes on one endpoint, one of them failing); a queued script still comes first. */
  respondForModel(model: string, script: Partial<FakeScript>): void {
    this.byModel.set(model, { text: defaultFakeText, ...script });
  }

  /**
   * What the next request gets (queued: call twice for the next two). A function is called when
   * that request arrives: an answer written against what the request's caller sees by then.
   */
  respondOnceWith(script: Partial<FakeScript> | (() => Partial<FakeScript>)): void {
    this.queue.push(script);
  }

  /** The server closes every open WebSocket, as at the connection time cap. */
  closeWebSockets(): void {
    for (const connection of this.openWebSockets) connection.ws.close(1000, 'connection time cap');
  }

  /** The next response.create on each open WebSocket is refused with `websocket_connection_limit_reached`. */
  expireWebSockets(): void {
    for (const connection of this.openWebSockets) connection.expired = true;
  }

  /** Forgets every response id, as after eviction: continuations get `previous_response_not_found`. */
  forgetResponses(): void {
    this.storedIds.clear();
    for (const connection of this.openWebSockets) connection.localIds.clear();
  }

  get openWebSocketCount(): number {
    return this.openWebSockets.size;
  }

  /** Answers paused at their script's `holdAfterChunks` whose client is still there. */
  get heldCount(): number {
    return this.holds.size;
  }

  /** Every held answer goes on to its end. */
  release(): void {
    for (const resume of this.holds) resume();
  }

  /** Resolves once `predicate` holds; rejects after `timeoutMs` (a guard, not a wait). */
  waitFor(predicate: (server: FakeOpenAIServer) => boolean, timeoutMs = 5_000): Promise<void> {
    return waitForChange(this.changes, () => predicate(this), timeoutMs, 'FakeOpenAIServer');
  }

  async close(): Promise<void> {
    for (const connection of this.openWebSockets) connection.ws.terminate();
    this.wss.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private changed(): void {
    this.changes.emit('change');
  }

  /** Settles on `release()`, or once the client has gone (nothing left to hold back from). */
  private hold(closed: Promise<void>): Promise<void> {
    let resume = (): void => undefined;
    const released = new Promise<void>((resolve) => (resume = resolve));
    this.holds.add(resume);
    this.changed();
    return Promise.race([released, closed]).then(() => {
      this.holds.delete(resume);
      this.changed();
    });
  }

  private nextScript(model: unknown): FakeScript {
    const next = this.queue.shift();
    const once = typeof next === 'function' ? next() : next;
    if (once) return { text: defaultFakeText, ...once };
    const forModel = this.byModel.get(String(model));
    if (forModel) return forModel;
    return typeof this.defaultScript === 'function' ? { text: defaultFakeText, ...this.defaultScript() } : this.defaultScript;
  }

  private record(entry: RecordedRequest): RecordedRequest {
    this.requests.push(entry);
    this.changed();
    return entry;
  }

  private settle(entry: RecordedRequest, outcome: RecordedRequest['outcome']): void {
    entry.outcome = outcome;
    this.changed();
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
    } catch {
      body = { unparseable: true };
    }
    const path = (req.url ?? '').split('?')[0] ?? '';
    const entry = this.record({
      transport: 'http',
      path,
      headers: req.headers,
      body,
      connectionId: this.sockets.get(req.socket) ?? 0,
      outcome: 'pending',
    });
    const api = path === '/v1/chat/completions' ? 'chat' : path === '/v1/responses' ? 'responses' : null;
    if (req.method !== 'POST' || api === null) {
      this.settle(entry, 'refused');
      return void sendError(res, { kind: 'status', status: 404, code: 'unknown_url', message: `Unknown path ${path}` });
    }
    const script = this.nextScript(body.model);
    if (script.fault?.kind === 'status') {
      this.settle(entry, 'refused');
      return void sendError(res, script.fault);
    }
    const previous = body.previous_response_id;
    if (api === 'responses' && typeof previous === 'string' && !this.storedIds.has(previous)) {
      this.settle(entry, 'refused');
      return void sendError(res, previousNotFound(previous));
    }
    const model = String(body.model ?? 'fake-model');
    const responseId = `resp_${this.nextResponse++}`;
    if (api === 'responses') entry.responseId = responseId;
    const includeUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
    const events = api === 'chat' ? chatCompletionWire(script, model, includeUsage, `chatcmpl-${responseId}`) : responsesWire(script, responseId, model);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const outcome = await playWire(events, script, sseSink(res, script, api, responseId), (closed) => this.hold(closed));
    if (outcome === 'completed') {
      res.end();
      if (api === 'responses' && script.finishReason !== 'length' && body.store !== false) this.storedIds.add(responseId);
    }
    this.settle(entry, outcome);
  }

  private onUpgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    const path = (req.url ?? '').split('?')[0];
    const status = path !== '/v1/responses' ? 404 : this.refuseUpgradeStatus;
    if (status !== null) {
      socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ''}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      const connection: WsConnection = { id: this.sockets.get(socket) ?? 0, ws, localIds: new Set(), busy: false, expired: false };
      this.wsConnections++;
      this.openWebSockets.add(connection);
      ws.on('message', (data) => void this.onMessage(connection, req.headers, String(data)));
      ws.once('close', () => {
        this.openWebSockets.delete(connection);
        this.changed();
      });
      this.changed();
    });
  }

  private async onMessage(connection: WsConnection, headers: IncomingHttpHeaders, text: string): Promise<void> {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      body = { type: 'unparseable' };
    }
    const entry = this.record({ transport: 'ws', path: '/v1/responses', headers, body, connectionId: connection.id, outcome: 'pending' });
    const { ws } = connection;
    const sendError = (fault: Extract<FakeFault, { kind: 'status' }>, close = false) => {
      this.settle(entry, 'refused');
      ws.send(JSON.stringify(errorEvent(fault)), () => close && ws.close(1000));
    };
    if (body.type !== 'response.create') return sendError(invalid(`Unsupported event type ${String(body.type)}`));
    if (connection.expired) {
      return sendError({ kind: 'status', status: 400, code: 'websocket_connection_limit_reached', message: 'Connection limit reached (60 minutes).' }, true);
    }
    if (connection.busy) return sendError({ kind: 'status', status: 400, code: 'response_already_in_flight' });
    const script = this.nextScript(body.model);
    if (script.fault?.kind === 'status') return sendError(script.fault);
    const previous = body.previous_response_id;
    if (typeof previous === 'string' && !connection.localIds.has(previous) && !this.storedIds.has(previous)) {
      return sendError(previousNotFound(previous));
    }
    connection.busy = true;
    const responseId = `resp_${this.nextResponse++}`;
    entry.responseId = responseId;
    const events = responsesWire(script, responseId, String(body.model ?? 'fake-model'));
    const outcome = await playWire(events, script, webSocketSink(ws, responseId), (closed) => this.hold(closed));
    connection.busy = false;
    if (outcome === 'completed' && script.finishReason !== 'length') {
      connection.localIds.add(responseId);
      if (body.store !== false) this.storedIds.add(responseId);
    }
    this.settle(entry, outcome);
  }
}

function invalid(message: string): Extract<FakeFault, { kind: 'status' }> {
  return { kind: 'status', status: 400, code: 'invalid_request', type: 'invalid_request_error', message };
}

function previousNotFound(id: string): Extract<FakeFault, { kind: 'status' }> {
  return { ...invalid(`Previous response with id '${id}' not found.`), code: 'previous_response_not_found' };
}

function errorObject(fault: Extract<FakeFault, { kind: 'status' }>) {
  return { message: fault.message ?? 'error', type: fault.type ?? 'invalid_request_error', param: null, code: fault.code ?? null };
}

function sendError(res: ServerResponse, fault: Extract<FakeFault, { kind: 'status' }>): void {
  res.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers });
  res.end(JSON.stringify({ error: errorObject(fault) }));
}

/** The WebSocket mode's error event: the HTTP status and headers it would have had, in-band. */
function errorEvent(fault: Extract<FakeFault, { kind: 'status' }>) {
  return { type: 'error', status: fault.status, error: errorObject(fault), ...(fault.headers ? { headers: fault.headers } : {}) };
}
