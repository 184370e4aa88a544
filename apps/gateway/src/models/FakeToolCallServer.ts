/**
 * Test support: a loopback server whose answers call tools, on the three wires the network
 * adapters speak — Chat Completions SSE, Responses SSE and the Responses WebSocket mode. Tests
 * script the answer (text, then calls whose arguments come in the given pieces) and read back
 * what each request sent. It checks nothing it is sent: the tests assert on the bodies.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';

export interface ToolCallAnswer {
  /** Text deltas before the calls. */
  text?: string[];
  calls: Array<{ id: string; name: string; pieces: string[] }>;
  /** Chat's `finish_reason` (default `tool_calls`). */
  finishReason?: string;
  /** Write each SSE event in pieces of this many bytes, one socket write each (events and UTF-8 characters cut anywhere). */
  splitEveryBytes?: number;
  /** Stop after the event that carries the first call's first piece of arguments, until `release()`. */
  hold?: boolean;
}

export interface ToolCallRequest {
  transport: 'http' | 'ws';
  body: Record<string, unknown>;
  /** Responses: the id the answer to this request had. */
  responseId: string;
}

export class FakeToolCallServer {
  readonly requests: ToolCallRequest[] = [];
  /** What every request gets. */
  answer: ToolCallAnswer = { calls: [] };
  private nextResponse = 1;
  private held: (() => void) | null = null;

  private constructor(
    private readonly server: http.Server,
    private readonly wss: WebSocketServer,
  ) {}

  static async start(): Promise<FakeToolCallServer> {
    const server = http.createServer();
    const wss = new WebSocketServer({ server, path: '/v1/responses', perMessageDeflate: false });
    const fake = new FakeToolCallServer(server, wss);
    server.on('request', (req, res) => void fake.onRequest(req, res));
    wss.on('connection', (ws) => {
      ws.on('message', async (data) => {
        const responseId = fake.record('ws', JSON.parse(String(data)) as Record<string, unknown>);
        await fake.play(responsesEvents(fake.answer, responseId), async (event) => void ws.send(JSON.stringify(event)));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  async close(): Promise<void> {
    for (const ws of this.wss.clients) ws.terminate();
    this.wss.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Whether an answer is held (`hold`), waiting for `release()`. */
  get isHolding(): boolean {
    return this.held !== null;
  }

  release(): void {
    this.held?.();
    this.held = null;
  }

  /** Sends the events in order, stopping where `hold` says. */
  private async play(events: Array<object | string>, send: (event: object | string) => Promise<void>): Promise<void> {
    const holdAt = this.answer.hold ? events.findIndex(carriesFirstArguments) : -1;
    for (const [i, event] of events.entries()) {
      // Holding before the event leaves: the client may read it before `send` returns.
      const gate = i === holdAt ? new Promise<void>((resolve) => (this.held = resolve)) : null;
      await send(event);
      if (gate) await gate;
    }
  }

  private record(transport: 'http' | 'ws', body: Record<string, unknown>): string {
    const responseId = `resp_${this.nextResponse++}`;
    this.requests.push({ transport, body, responseId });
    return responseId;
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const responseId = this.record('http', JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>);
    const chat = req.url === '/v1/chat/completions';
    const events = chat ? [...chatEvents(this.answer), '[DONE]'] : responsesEvents(this.answer, responseId);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const split = this.answer.splitEveryBytes ?? Infinity;
    await this.play(events, async (event) => {
      const bytes = Buffer.from(`data: ${typeof event === 'string' ? event : JSON.stringify(event)}\n\n`, 'utf8');
      for (let at = 0; at < bytes.length; at += split) {
        await new Promise<void>((resolve) => res.write(bytes.subarray(at, at + split), () => resolve()));
        // A turn of the event loop between writes, so they leave as separate TCP segments.
        await new Promise((resolve) => setImmediate(resolve));
      }
    });
    res.end();
  }
}

/** Chat chunks as OpenAI streams them: a call's id and name first, then its arguments piece by piece. */
function chatEvents(answer: ToolCallAnswer): object[] {
  const chunk = (delta: object, finish: string | null = null) => ({
    id: 'chatcmpl-tools',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: 'fake-model',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
  return [
    chunk({ role: 'assistant', content: answer.text ? '' : null }),
    ...(answer.text ?? []).map((content) => chunk({ content })),
    ...answer.calls.flatMap(({ id, name, pieces }, index) => [
      chunk({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: '' } }] }),
      ...pieces.map((piece) => chunk({ tool_calls: [{ index, function: { arguments: piece } }] })),
    ]),
    chunk({}, answer.finishReason ?? 'tool_calls'),
  ];
}

/** The Responses events of one answer: a message item for the text, then a function_call item per call. */
function responsesEvents(answer: ToolCallAnswer, responseId: string): object[] {
  const events: object[] = [];
  const emit = (type: string, fields: object) => events.push({ type, sequence_number: events.length, ...fields });
  const response = (status: string, output: object[]) => ({ id: responseId, object: 'response', status, output, usage: null });
  const output: object[] = [];
  emit('response.created', { response: response('in_progress', []) });
  if (answer.text) {
    const id = `msg_${responseId}`;
    emit('response.output_item.added', { output_index: 0, item: { id, type: 'message', role: 'assistant', content: [] } });
    for (const delta of answer.text) emit('response.output_text.delta', { item_id: id, output_index: 0, content_index: 0, delta });
    const item = { id, type: 'message', role: 'assistant', content: [{ type: 'output_text', text: answer.text.join('') }] };
    emit('response.output_item.done', { output_index: 0, item });
    output.push(item);
  }
  for (const { id: callId, name, pieces } of answer.calls) {
    const outputIndex = output.length;
    const item = { id: `fc_${responseId}_${outputIndex}`, type: 'function_call', call_id: callId, name, arguments: '', status: 'in_progress' };
    emit('response.output_item.added', { output_index: outputIndex, item });
    for (const delta of pieces) emit('response.function_call_arguments.delta', { item_id: item.id, output_index: outputIndex, delta });
    const done = { ...item, arguments: pieces.join(''), status: 'completed' };
    emit('response.function_call_arguments.done', { item_id: item.id, output_index: outputIndex, arguments: done.arguments });
    emit('response.output_item.done', { output_index: outputIndex, item: done });
    output.push(done);
  }
  emit('response.completed', { response: response('completed', output) });
  return events;
}

/** The chunk or event that carries the first piece of a call's arguments. */
function carriesFirstArguments(event: object | string): boolean {
  if (typeof event === 'string') return false;
  const wire = event as { type?: string; choices?: Array<{ delta?: { tool_calls?: Array<{ id?: string }> } }> };
  if (wire.type !== undefined) return wire.type === 'response.function_call_arguments.delta';
  const call = wire.choices?.[0]?.delta?.tool_calls?.[0];
  return call !== undefined && call.id === undefined;
}
