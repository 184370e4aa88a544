/**
 * A loopback stand-in for the two raw-completion endpoints autocomplete uses, on one port:
 * OpenAI-compatible POST /v1/completions (SSE `text_completion` chunks, `[DONE]`) and
 * llama-server's POST /infill (SSE `{content, stop}` events, a final `stop: true`, no `[DONE]`).
 * Scripted and recorded like FakeOpenAIServer: `requests` says what the adapter sent and whether
 * it hung up mid-stream (`client-closed`), which is how tests see a cancellation arrive.
 *
 * @example
 * const server = await FakeFimServer.start();
 * server.respondOnceWith({ chunks: ['a + ', 'b;'], delayMs: 5 });
 * // ... point the complete route at server.baseUrl (or server.infillUrl) ...
 * await server.close();
 */
import { EventEmitter } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { RecordedRequest } from './FakeOpenAIServer';
import { defaultFakeText, scriptChunks, scriptUsage, type FakeFault, type FakeScript } from './FakeScript';
import { playWire } from './playWire';
import { waitForChange } from './waitForChange';
import { sseSink } from './wireSinks';
import { usageChunk, type WireEvent } from './WireEvent';

const created = 1_700_000_000;

/** `/v1/completions` chunks; a usage chunk with `choices: []` when the client asked for it. */
export function completionWire(script: FakeScript, model: string, includeUsage: boolean): WireEvent[] {
  const base = { id: 'cmpl-fake', object: 'text_completion', created, model };
  const choice = (text: string, finish: string | null) => ({ text, index: 0, logprobs: null, finish_reason: finish });
  const events: WireEvent[] = scriptChunks(script).map((text) => ({ payload: { ...base, choices: [choice(text, null)] }, isText: true }));
  events.push({ payload: { ...base, choices: [choice('', script.finishReason ?? 'stop')] }, isText: false });
  if (includeUsage) events.push(usageChunk(base, script));
  events.push({ payload: '[DONE]', isText: false });
  return events;
}

/** llama-server `/infill` stream events: one per token, then the final `stop: true` with counts. */
export function infillWire(script: FakeScript): WireEvent[] {
  const usage = scriptUsage(script);
  const chunks = scriptChunks(script);
  const events: WireEvent[] = chunks.map((content, i) => ({
    payload: { index: 0, content, stop: false, id_slot: 0, tokens_predicted: i + 1, tokens_evaluated: usage.inputTokens },
    isText: true,
  }));
  events.push({
    payload: {
      index: 0,
      content: '',
      stop: true,
      stop_type: script.finishReason === 'length' ? 'limit' : 'eos',
      tokens_predicted: usage.outputTokens,
      tokens_evaluated: usage.inputTokens,
      tokens_cached: usage.cachedInputTokens,
      timings: { prompt_n: usage.inputTokens - usage.cachedInputTokens, predicted_n: usage.outputTokens },
    },
    isText: false,
  });
  return events;
}

export class FakeFimServer {
  readonly requests: RecordedRequest[] = [];
  private defaultScript: FakeScript = { text: defaultFakeText };
  private readonly queue: Partial<FakeScript>[] = [];
  private readonly sockets = new Map<Socket, number>();
  private readonly changes = new EventEmitter();
  private connections = 0;

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<FakeFimServer> {
    const server = http.createServer();
    const fake = new FakeFimServer(server);
    server.on('connection', (socket: Socket) => {
      fake.sockets.set(socket, ++fake.connections);
      socket.once('close', () => fake.sockets.delete(socket));
    });
    server.on('request', (req, res) => void fake.onRequest(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  private get origin(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The OpenAI-compatible base URL, e.g. http://127.0.0.1:54321/v1. */
  get baseUrl(): string {
    return `${this.origin}/v1`;
  }

  /** llama-server's infill endpoint on this server. */
  get infillUrl(): string {
    return `${this.origin}/infill`;
  }

  respondWith(script: Partial<FakeScript>): void {
    this.defaultScript = { text: defaultFakeText, ...script };
  }

  respondOnceWith(script: Partial<FakeScript>): void {
    this.queue.push(script);
  }

  /** Resolves once `predicate` holds; rejects after `timeoutMs` (a guard, not a wait). */
  waitFor(predicate: (server: FakeFimServer) => boolean, timeoutMs = 5_000): Promise<void> {
    return waitForChange(this.changes, () => predicate(this), timeoutMs, 'FakeFimServer');
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private settle(entry: RecordedRequest, outcome: RecordedRequest['outcome']): void {
    entry.outcome = outcome;
    this.changes.emit('change');
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
    } catch {
      body = { unparseable: true };
    }
    const path = (req.url ?? '').split('?')[0] ?? '';
    const entry: RecordedRequest = { transport: 'http', path, headers: req.headers, body, connectionId: this.sockets.get(req.socket) ?? 0, outcome: 'pending' };
    this.requests.push(entry);
    this.changes.emit('change');
    const api = path === '/v1/completions' ? 'completions' : path === '/infill' ? 'infill' : null;
    if (req.method !== 'POST' || api === null) {
      this.settle(entry, 'refused');
      return void sendError(res, { kind: 'status', status: 404, code: 'unknown_url', message: `Unknown path ${path}` });
    }
    const once = this.queue.shift();
    const script: FakeScript = once ? { text: defaultFakeText, ...once } : this.defaultScript;
    if (script.fault?.kind === 'status') {
      this.settle(entry, 'refused');
      return void sendError(res, script.fault);
    }
    const includeUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
    const events = api === 'completions' ? completionWire(script, String(body.model ?? 'fake-model'), includeUsage) : infillWire(script);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const outcome = await playWire(events, script, sseSink(res, script, 'chat', 'cmpl-fake'));
    if (outcome === 'completed') res.end();
    this.settle(entry, outcome);
  }
}

function sendError(res: ServerResponse, fault: Extract<FakeFault, { kind: 'status' }>): void {
  res.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers });
  res.end(JSON.stringify({ error: { message: fault.message ?? 'error', type: fault.type ?? 'invalid_request_error', param: null, code: fault.code ?? null } }));
}
