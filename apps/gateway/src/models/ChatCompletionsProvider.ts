/**
 * OpenAI-compatible Chat Completions over SSE, for any base URL: OpenAI, Cerebras, Groq, vLLM,
 * llama-server, Ollama, LM Studio. One HTTP client per provider (ProviderHttp), so sequential
 * requests reuse a warm TCP (and TLS) connection, or one HTTP/2 connection. A request's `tools` are
 * sent as function tools and the model's calls stream back piece by piece (chatToolCalls). For
 * autocomplete it also completes raw FIM prompts (`/v1/completions`) and, where configured,
 * llama-server's native `/infill`.
 */
import {
  ProviderError,
  type FinishReason,
  type InfillRequest,
  type ModelEvent,
  type ModelProvider,
  type ModelRequest,
  type PromptRequest,
  withRequestId,
} from '../core/ports/ModelProvider';
import { ChatChunkReader } from './chatChunk';
import { chatMessages, ChatToolCallReader, chatTools } from './chatToolCalls';
import { readCompletionChunk, readInfillChunk, type CompletionChunk } from './fim/completionWire';
import { providerErrorFromWire, wireErrorOf } from './providerErrorFromWire';
import { EventQueue } from './EventQueue';
import { closeDispatcher, providerDispatcher, SseResponse, type ProviderHttpOptions, type SseReader } from './ProviderHttp';
import { mergeDeltas, TextRun } from './TextRun';
import type { Dispatcher } from 'undici';

export interface ChatCompletionsOptions {
  /** e.g. "https://api.cerebras.ai/v1", "http://127.0.0.1:8080/v1"; `/chat/completions` is appended. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer …`; local servers need none. */
  apiKey?: string;
  /** Names this provider in errors and breaker state, e.g. "cerebras". Defaults to the host. */
  name?: string;
  /**
   * Which field carries `maxOutputTokens`. Default `max_tokens`: every OpenAI-compatible server
   * (llama-server, Ollama, vLLM, Groq, Cerebras, LM Studio) accepts it, while
   * `max_completion_tokens` is OpenAI's newer name that its reasoning models require.
   */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  /** The server accepts `prediction: {type: 'content'}` (OpenAI predicted outputs). */
  supportsPrediction?: boolean;
  /** Ask for the final usage chunk (`stream_options.include_usage`); off for servers that reject it. */
  includeUsage?: boolean;
  /** No byte from the server for this long fails the request as `network`. Default 30 s. */
  idleTimeoutMs?: number;
  /** Extra headers (e.g. `OpenAI-Organization`). */
  headers?: Record<string, string>;
  /** llama-server's `/infill` URL (e.g. "http://127.0.0.1:8080/infill"): enables `infill`. */
  infillUrl?: string;
  /** Certificate authorities to trust instead of Node's (see `ProviderHttpOptions.ca`). */
  ca?: string | Buffer;
  /** How its connections resolve names and whether they follow redirects (see ProviderHttpOptions). */
  http?: Pick<ProviderHttpOptions, 'lookup' | 'followRedirects'>;
}

export class ChatCompletionsProvider implements ModelProvider {
  readonly kind = 'openai-chat';
  private readonly url: URL;
  private readonly completionsUrl: URL;
  private readonly infillUrl: URL | null;
  private readonly name: string;
  /** Kept-alive connections to every origin this provider asks (the infill URL's too). */
  private readonly dispatcher: Dispatcher;
  private readonly headers: Record<string, string>;

  constructor(private readonly options: ChatCompletionsOptions) {
    this.dispatcher = providerDispatcher({ ca: options.ca, ...options.http });
    const base = options.baseUrl.replace(/\/+$/, '');
    this.url = new URL(`${base}/chat/completions`);
    this.completionsUrl = new URL(`${base}/completions`);
    this.infillUrl = options.infillUrl ? new URL(options.infillUrl) : null;
    this.name = options.name ?? this.url.host;
    this.headers = { ...options.headers };
    if (options.apiKey) this.headers.authorization = `Bearer ${options.apiKey}`;
  }

  stream(request: ModelRequest, signal: AbortSignal): AsyncIterableIterator<ModelEvent> {
    return this.run(this.url, this.body(request), signal, new ChatChunkReader());
  }

  /** A raw prompt (a FIM template's output) to `/v1/completions`, streamed. */
  completePrompt(request: PromptRequest, signal: AbortSignal): AsyncIterableIterator<ModelEvent> {
    const body: Record<string, unknown> = {
      model: request.model,
      prompt: request.prompt,
      stream: true,
      max_tokens: request.maxOutputTokens,
    };
    if (this.options.includeUsage !== false) body.stream_options = { include_usage: true };
    if (request.temperature !== undefined) body.temperature = request.temperature;
    if (request.stop && request.stop.length > 0) body.stop = request.stop;
    return this.run(this.completionsUrl, body, signal, { chunk: readCompletionChunk });
  }

  /** llama-server's `/infill`: the server applies the model's own FIM tokens and repo format. */
  infill(prefix: string, suffix: string, request: InfillRequest, signal: AbortSignal): AsyncIterableIterator<ModelEvent> {
    if (!this.infillUrl) return notConfigured(this.name);
    const body: Record<string, unknown> = {
      input_prefix: prefix,
      input_suffix: suffix,
      input_extra: request.extra ?? [],
      stream: true,
      n_predict: request.maxOutputTokens,
      // Keystroke after keystroke the prompt mostly repeats: let the slot reuse its KV cache.
      cache_prompt: true,
    };
    if (request.model) body.model = request.model;
    if (request.temperature !== undefined) body.temperature = request.temperature;
    if (request.stop && request.stop.length > 0) body.stop = request.stop;
    return this.run(this.infillUrl, body, signal, { chunk: readInfillChunk });
  }

  async close(): Promise<void> {
    await closeDispatcher(this.dispatcher);
  }

  /**
   * One streamed POST whose SSE events `read` decodes; the one loop every endpoint shares. Events
   * are decoded in the socket's read callback and queued (no async step per layer, see EventQueue).
   */
  private run(url: URL, body: unknown, signal: AbortSignal, read: StreamEventReader): AsyncIterableIterator<ModelEvent> {
    let stream: SseResponse | null = null;
    let finished = false;
    const queue: EventQueue<ModelEvent> = new EventQueue({
      signal,
      merge: mergeDeltas,
      start: () => {
        SseResponse.open({
          url,
          headers: this.headers,
          body,
          dispatcher: this.dispatcher,
          signal,
          idleTimeoutMs: this.options.idleTimeoutMs ?? 30_000,
          provider: this.name,
        },
          // Read from the callback that brought the head: the first text is queued there.
          (opened) => {
            stream = opened;
            return this.reader(opened, queue, signal, read, () => (finished = true));
          },
        ).then((opened) => {
          if (!opened) return queue.end();
          // The consumer stopped while it opened: what was queued meanwhile was dropped.
          if (queue.isClosed && !finished) opened.destroy();
        }, (error: unknown) => queue.fail(error));
      },
      stop: () => {
        // The consumer stopped early: an answer read to its end keeps its connection.
        if (finished) void stream?.finish();
        else stream?.destroy();
      },
    });
    return queue;
  }

  private reader(stream: SseResponse, queue: EventQueue<ModelEvent>, signal: AbortSignal, read: StreamEventReader, onFinished: () => void): SseReader {
    let finishReason: FinishReason | null = null;
    let usage: Extract<ModelEvent, { type: 'usage' }> | null = null;
    /** The final event or a bad one was read: the rest of that network read is ignored. */
    let over = false;
    const text = new TextRun();
    const toolCalls = new ChatToolCallReader();
    // Failures after the head name the request by the head's id: the transport's own do not.
    const fail = (error: unknown) => queue.fail(withRequestId(error, stream.requestId));
    const pushText = () => {
      const event = text.take();
      if (event) queue.push(event);
    };
    const complete = () => {
      over = true;
      onFinished();
      pushText();
      if (usage) queue.push(usage);
      // An answer that called tools waits for their results, whatever the server said (some say stop).
      const finish = finishReason ?? 'stop';
      queue.push({ type: 'done', finishReason: finish === 'stop' && toolCalls.count > 0 ? 'tool_calls' : finish });
      // The iteration ends once the answer is read to its end: the next request finds the connection idle.
      void stream.finish().then(() => queue.end());
    };
    const badEvent = (error: ProviderError) => {
      // What arrived before the bad event is the model's output: deliver it, then fail.
      over = true;
      pushText();
      stream.destroy();
      fail(error);
    };
    return {
      event: (event) => {
        if (over) return;
        const chunk = read.chunk(event.data);
        if (chunk === null) return badEvent(new ProviderError('bad_response', `${this.name} sent a stream event that is not JSON.`, null, this.name));
        if (chunk.error !== null) return badEvent(providerErrorFromWire({ ...wireErrorOf(chunk.error) }, this.name));
        if (chunk.text) text.add(chunk.text);
        if (chunk.toolCalls) {
          // The text before a call comes before it; each piece of arguments goes on as it came.
          pushText();
          const wrong = toolCalls.read(chunk.toolCalls, (toolEvent) => queue.push(toolEvent));
          if (wrong !== null) return badEvent(new ProviderError('bad_response', `${this.name} ${wrong}.`, null, this.name));
        }
        if (chunk.finishReason) finishReason = chunk.finishReason;
        if (chunk.usage) usage = { type: 'usage', ...chunk.usage };
        if (chunk.final) complete();
      },
      readEnd: pushText,
      end: () => {
        if (signal.aborted) return queue.end();
        // Some servers end the body without `[DONE]`; a finish reason still proves it completed.
        if (finishReason !== null) return complete();
        fail(new ProviderError('network', `${this.name}: the stream ended before the model finished — try again.`, null, this.name));
      },
      fail: (error) => {
        pushText();
        fail(error);
      },
    };
  }

  private body(request: ModelRequest): Record<string, unknown> {
    const body: Record<string, unknown> = {
      model: request.model,
      messages: chatMessages(request.messages),
      stream: true,
      [this.options.maxTokensField ?? 'max_tokens']: request.maxOutputTokens,
    };
    if (this.options.includeUsage !== false) body.stream_options = { include_usage: true };
    if (request.temperature !== undefined) body.temperature = request.temperature;
    if (request.stop && request.stop.length > 0) body.stop = request.stop;
    if (request.tools && request.tools.length > 0) body.tools = chatTools(request.tools);
    if (request.prediction !== undefined && this.options.supportsPrediction) {
      body.prediction = { type: 'content', content: request.prediction };
    }
    return body;
  }
}

/** How one endpoint's stream events are read: each event's `data`. */
interface StreamEventReader {
  chunk(data: string): CompletionChunk | null;
}

/** Fails on the first `next()`, like a request the server refused. */
async function* notConfigured(name: string): AsyncGenerator<ModelEvent, void, undefined> {
  throw new ProviderError('not_configured', `${name}: no /infill endpoint is configured for this route — set infillEndpoint, or use a FIM template.`, null, name);
}
