/**
 * OpenAI Responses API over persistent WebSockets (`wss://…/v1/responses`, `response.create`),
 * with HTTP SSE (`POST /v1/responses`, `stream: true`) as the fallback transport.
 *
 * - Tools: a request's `tools` go as function tools; the model's calls stream back as
 *   `tool-call` / `tool-call-delta` events (ResponsesOutput), and calls and their results go back
 *   as `function_call` / `function_call_output` input items.
 * - Continuation: a follow-up in the same `threadId` sends only the new messages with
 *   `previous_response_id` (after tool calls: just their results; ResponsesThreads); if the server
 *   no longer has that response (`previous_response_not_found`) the full input is sent once more.
 * - Concurrency: one response per socket (the WebSocket mode is sequential per connection); a
 *   second concurrent request opens a second socket, up to `maxSockets`, then queues.
 * - Cancellation closes the socket: the WebSocket mode documents no cancel event for a response
 *   (`response.cancel` belongs to the Realtime API), and a closed connection reliably stops
 *   generation. A replacement socket is opened in the background.
 * - Reconnection: a socket the server closed (its 60-minute cap) leaves the pool; a request whose
 *   socket closes before any event, or that is refused with `websocket_connection_limit_reached`,
 *   is retried on a fresh socket.
 * - Not supported by the Responses API, so ignored: `request.stop` and `request.prediction`.
 */
import { ProviderError, withRequestId, type ModelEvent, type ModelMessage, type ModelProvider, type ModelRequest, type ToolSpec } from '../core/ports/ModelProvider';
import { providerErrorFromWire, requestIdFromHeaders, retryAfterMsFromHeaders, WireProviderError } from './providerErrorFromWire';
import { finishedEvents, readResponsesEvent, type ResponsesStep } from './readResponsesEvent';
import { ResponsesOutput } from './ResponsesOutput';
import { ResponsesSocket, socketClosed, socketGarbage, socketIdle, UpgradeRefused } from './ResponsesSocket';
import { ResponsesSocketPool } from './ResponsesSocketPool';
import { ResponsesThreads, type InputPlan } from './ResponsesThreads';
import { closeDispatcher, providerDispatcher, SseResponse } from './ProviderHttp';
import { TextRun } from './TextRun';

export interface ResponsesOptions {
  /** e.g. "https://api.openai.com/v1"; the WebSocket URL is derived (https → wss). */
  baseUrl: string;
  apiKey: string;
  /** Names this provider in errors, e.g. "openai". Defaults to the host. */
  name?: string;
  /** Default 'auto': WebSocket, falling back to SSE when the upgrade is refused (e.g. 404). */
  transport?: 'websocket' | 'sse' | 'auto';
  /**
   * Default false (nothing retained server-side beyond the connection). Then continuation works
   * only on the socket that produced the previous response; true lets any socket and SSE continue.
   */
  store?: boolean;
  /** Concurrent responses, one socket each. Default 4. */
  maxSockets?: number;
  /** No event for this long mid-response fails it as `network`. Default 30 s. */
  idleTimeoutMs?: number;
  /** WebSocket handshake limit. Default 10 s. */
  connectTimeoutMs?: number;
  /** In 'auto', how long SSE is used after a refused upgrade before WebSocket is tried again. Default 10 min. */
  webSocketRetryMs?: number;
  clock?: { now(): number };
}

type Outcome = 'done' | 'resend-full' | 'reconnect';

export class ResponsesProvider implements ModelProvider {
  readonly kind = 'openai-responses';
  private readonly name: string;
  private readonly httpUrl: URL;
  private readonly webSocketUrl: string;
  private readonly headers: Record<string, string>;
  private readonly dispatcher = providerDispatcher();
  private readonly pool: ResponsesSocketPool;
  private readonly threads = new ResponsesThreads();
  private readonly transport: 'websocket' | 'sse' | 'auto';
  private readonly store: boolean;
  private readonly idleTimeoutMs: number;
  private readonly clock: { now(): number };
  private webSocketRefusedAt: number | null = null;

  constructor(private readonly options: ResponsesOptions) {
    this.httpUrl = new URL(`${options.baseUrl.replace(/\/+$/, '')}/responses`);
    this.webSocketUrl = this.httpUrl.href.replace(/^http/, 'ws');
    this.name = options.name ?? this.httpUrl.host;
    this.headers = { authorization: `Bearer ${options.apiKey}` };
    this.transport = options.transport ?? 'auto';
    this.store = options.store ?? false;
    this.idleTimeoutMs = options.idleTimeoutMs ?? 30_000;
    this.clock = options.clock ?? Date;
    const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
    this.pool = new ResponsesSocketPool(
      () => ResponsesSocket.open(this.webSocketUrl, this.headers, connectTimeoutMs, this.name),
      options.maxSockets ?? 4,
    );
  }

  async *stream(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelEvent, void, undefined> {
    if (signal.aborted) return;
    if (this.webSocketAllowed()) {
      const fallBack = yield* this.overWebSocket(request, signal);
      if (!fallBack) return;
    }
    yield* this.overSse(request, signal);
  }

  async close(): Promise<void> {
    this.pool.closeAll();
    await closeDispatcher(this.dispatcher);
  }

  private webSocketAllowed(): boolean {
    if (this.transport !== 'auto') return this.transport === 'websocket';
    if (this.webSocketRefusedAt === null) return true;
    return this.clock.now() - this.webSocketRefusedAt >= (this.options.webSocketRetryMs ?? 600_000);
  }

  /** Returns true when the caller should fall back to SSE. */
  private async *overWebSocket(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelEvent, boolean, undefined> {
    let fullInput = false;
    for (let attempt = 0; ; attempt++) {
      let socket: ResponsesSocket | null;
      try {
        const preferred = this.threads.connectionOf(request.threadId) as ResponsesSocket | null;
        // An idle socket is taken without an await: the request leaves before the caller's own
        // work after asking (a turn's first status, the prompt's reply), as over SSE.
        socket = this.pool.idleSocket(preferred) ?? (await this.pool.acquire(preferred, signal));
      } catch (error) {
        if (error instanceof UpgradeRefused) return this.onUpgradeRefused(error);
        throw error;
      }
      if (!socket) return false;
      if (signal.aborted) {
        // Aborted while the handshake ran: keep the fresh socket, send nothing.
        this.pool.release(socket);
        return false;
      }
      const outcome = yield* this.responseOn(socket, request, signal, fullInput);
      if (outcome === 'done') return false;
      if (attempt >= 2) throw this.networkError('the WebSocket kept closing before the response started');
      if (outcome === 'resend-full') fullInput = true;
    }
  }

  private onUpgradeRefused(refused: UpgradeRefused): boolean {
    const error = providerErrorFromWire(
      { status: refused.status, retryAfterMs: retryAfterMsFromHeaders(refused.headers, this.clock.now()), requestId: requestIdFromHeaders(refused.headers) },
      this.name,
    );
    // A bad key or a rate limit would refuse SSE just the same: report it instead.
    const sameOverHttp = error.code === 'auth' || error.code === 'rate_limited' || error.code === 'quota';
    if (this.transport !== 'auto' || sameOverHttp) throw error;
    this.webSocketRefusedAt = this.clock.now();
    return true;
  }

  private async *responseOn(
    socket: ResponsesSocket,
    request: ModelRequest,
    signal: AbortSignal,
    fullInput: boolean,
  ): AsyncGenerator<ModelEvent, Outcome, undefined> {
    const plan = fullInput ? { input: request.messages, previousResponseId: null } : this.threads.plan(request, socket);
    const output = new ResponsesOutput(this.name);
    let responseId: string | null = null;
    let received = false;
    let terminal = false;
    const cancel = () => socket.close();
    signal.addEventListener('abort', cancel, { once: true });
    try {
      socket.send({ type: 'response.create', ...this.body(request, plan) });
      socket.watchIdle(this.idleTimeoutMs);
      // The messages of one network read: those already queued when the first is taken.
      const text = new TextRun();
      for (;;) {
        const first = await socket.next();
        for (const message of [first, ...socket.takeQueued()]) {
          if (signal.aborted) return 'done';
          if (message === socketClosed) {
            // Closed before it started on ours: the server's time cap, not a failed response.
            if (!received) return 'reconnect';
            yield* text.flush();
            throw this.networkError('the WebSocket closed mid-response');
          }
          if (message === socketIdle) {
            yield* text.flush();
            throw this.networkError(`no data for ${this.idleTimeoutMs} ms`);
          }
          received = true;
          const step: ResponsesStep = message === socketGarbage ? { type: 'malformed' } : readResponsesEvent(message, this.name);
          if (step.type === 'text') {
            output.addText(step.text);
            text.add(step.text);
            continue;
          }
          yield* text.flush();
          if (signal.aborted) return 'done';
          if (step.type === 'function-call') {
            for (const event of output.call(step.piece)) {
              yield event;
              if (signal.aborted) return 'done';
            }
          } else if (step.type === 'created') {
            responseId = step.responseId;
          } else if (step.type === 'finished') {
            terminal = true;
            const id = step.responseId ?? responseId;
            if (id) this.threads.remember(request, id, output.message(), this.store ? null : socket);
            yield* finishedEvents(step, output.finishReason(step.finishReason), signal);
            return 'done';
          } else if (step.type === 'failed') {
            // The server ended this response; the socket itself is still good.
            terminal = true;
            const code = step.error.wireCode;
            if (output.isEmpty && code === 'previous_response_not_found' && plan.previousResponseId) {
              this.threads.forget(request.threadId);
              return 'resend-full';
            }
            if (output.isEmpty && code === 'websocket_connection_limit_reached') {
              socket.close();
              return 'reconnect';
            }
            throw step.error;
          } else if (step.type === 'malformed') {
            throw this.badResponse();
          }
        }
        yield* text.flush();
      }
    } catch (error) {
      // A WebSocket answer has no headers of its own: the response's id names it.
      throw withRequestId(error, responseId);
    } finally {
      signal.removeEventListener('abort', cancel);
      socket.unwatchIdle();
      // Unfinished (abort, consumer stopped, error): closing is what stops the generation.
      if (!terminal) socket.close();
      this.pool.release(socket);
      if (signal.aborted) this.pool.prewarm();
    }
  }

  private async *overSse(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelEvent, void, undefined> {
    // Without `store`, responses live only in a WebSocket's memory: SSE always sends everything.
    let plan: InputPlan = this.store ? this.threads.plan(request, null) : { input: request.messages, previousResponseId: null };
    let stream: SseResponse | null;
    try {
      stream = await this.openSse(request, plan, signal);
    } catch (error) {
      const stale = error instanceof WireProviderError && error.wireCode === 'previous_response_not_found';
      if (!stale || !plan.previousResponseId) throw error;
      this.threads.forget(request.threadId);
      plan = { input: request.messages, previousResponseId: null };
      stream = await this.openSse(request, plan, signal);
    }
    if (!stream) return;
    const output = new ResponsesOutput(this.name);
    let responseId: string | null = null;
    let terminal = false;
    try {
      const text = new TextRun();
      for await (const batch of stream.batches()) {
        for (const event of batch) {
          let step: ResponsesStep;
          try {
            step = readResponsesEvent(JSON.parse(event.data), this.name);
          } catch {
            step = { type: 'malformed' };
          }
          if (step.type === 'text') {
            output.addText(step.text);
            text.add(step.text);
            continue;
          }
          yield* text.flush();
          if (signal.aborted) return;
          if (step.type === 'function-call') {
            for (const event of output.call(step.piece)) {
              yield event;
              if (signal.aborted) return;
            }
          } else if (step.type === 'created') {
            responseId = step.responseId;
          } else if (step.type === 'finished') {
            terminal = true;
            const id = step.responseId ?? responseId;
            if (id && this.store) this.threads.remember(request, id, output.message(), null);
            yield* finishedEvents(step, output.finishReason(step.finishReason), signal);
            await stream.finish();
            return;
          } else if (step.type === 'failed') {
            throw step.error;
          } else if (step.type === 'malformed') {
            throw this.badResponse();
          }
        }
        yield* text.flush();
        if (signal.aborted) return;
      }
      if (signal.aborted) return;
      throw this.networkError('the stream ended before the response completed');
    } catch (error) {
      throw withRequestId(error, stream.requestId ?? responseId);
    } finally {
      if (terminal) void stream.finish();
      else stream.destroy();
    }
  }

  private openSse(request: ModelRequest, plan: InputPlan, signal: AbortSignal): Promise<SseResponse | null> {
    return SseResponse.open({
      url: this.httpUrl,
      headers: this.headers,
      body: { ...this.body(request, plan), stream: true },
      dispatcher: this.dispatcher,
      signal,
      idleTimeoutMs: this.idleTimeoutMs,
      provider: this.name,
    });
  }

  private body(request: ModelRequest, plan: InputPlan): Record<string, unknown> {
    const body: Record<string, unknown> = {
      model: request.model,
      // System messages go in `input`, not `instructions`: instructions are not carried over by
      // `previous_response_id`, input items are.
      input: inputItems(plan.input),
      max_output_tokens: request.maxOutputTokens,
      store: this.store,
    };
    if (plan.previousResponseId) body.previous_response_id = plan.previousResponseId;
    if (request.temperature !== undefined) body.temperature = request.temperature;
    if (request.tools && request.tools.length > 0) body.tools = functionTools(request.tools);
    return body;
  }

  private networkError(reason: string): ProviderError {
    return new ProviderError('network', `${this.name}: ${reason} — try again.`, null, this.name);
  }

  private badResponse(): ProviderError {
    return new ProviderError('bad_response', `${this.name} sent an event that is not valid Responses JSON.`, null, this.name);
  }
}

/** Messages as input items: an answer's calls follow its text as `function_call` items, results go as `function_call_output`. */
function inputItems(messages: ModelMessage[]): unknown[] {
  return messages.flatMap((message): unknown[] => {
    if (message.role === 'tool') return [{ type: 'function_call_output', call_id: message.callId, output: message.content }];
    if (message.role !== 'assistant' || !message.toolCalls?.length) return [{ role: message.role, content: message.content }];
    const calls = message.toolCalls.map((call) => ({ type: 'function_call', call_id: call.id, name: call.name, arguments: call.arguments }));
    return message.content === '' ? calls : [{ role: 'assistant', content: message.content }, ...calls];
  });
}

function functionTools(tools: ToolSpec[]): unknown[] {
  // Not strict: strict mode requires every property listed as required and no optional ones.
  return tools.map(({ name, description, parameters }) => ({ type: 'function', name, description, parameters, strict: false }));
}
