/**
 * OpenAI-compatible Chat Completions over SSE, for any base URL: OpenAI, Cerebras, Groq, vLLM,
 * llama-server, Ollama, LM Studio. One keep-alive agent per provider, so sequential requests
 * reuse a warm TCP (and TLS) connection.
 */
import type http from 'node:http';
import {
  ProviderError,
  type FinishReason,
  type ModelEvent,
  type ModelProvider,
  type ModelRequest,
} from './ModelProvider';
import { providerErrorFromWire, wireErrorOf } from './providerErrorFromWire';
import { keepAliveAgentFor, SseStream } from './SseStream';

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
}

interface ChatChunk {
  choices?: Array<{ delta?: { content?: string | null } | null; finish_reason?: string | null } | null> | null;
  usage?: {
    prompt_tokens?: number;
    completion_tokens?: number;
    prompt_tokens_details?: { cached_tokens?: number } | null;
  } | null;
  error?: unknown;
}

export class ChatCompletionsProvider implements ModelProvider {
  readonly kind = 'openai-chat';
  private readonly url: URL;
  private readonly name: string;
  private readonly agent: http.Agent;
  private readonly headers: Record<string, string>;

  constructor(private readonly options: ChatCompletionsOptions) {
    this.url = new URL(`${options.baseUrl.replace(/\/+$/, '')}/chat/completions`);
    this.name = options.name ?? this.url.host;
    this.agent = keepAliveAgentFor(this.url);
    this.headers = { ...options.headers };
    if (options.apiKey) this.headers.authorization = `Bearer ${options.apiKey}`;
  }

  async *stream(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelEvent, void, undefined> {
    const stream = await SseStream.open({
      url: this.url,
      headers: this.headers,
      body: this.body(request),
      agent: this.agent,
      signal,
      idleTimeoutMs: this.options.idleTimeoutMs ?? 30_000,
      provider: this.name,
    });
    if (!stream) return;
    let finished = false;
    try {
      let finishReason: FinishReason | null = null;
      let usage: Extract<ModelEvent, { type: 'usage' }> | null = null;
      for await (const event of stream.events()) {
        if (event.data === '[DONE]') {
          finished = true;
          break;
        }
        const chunk = this.parse(event.data);
        if (chunk.error !== undefined && chunk.error !== null) {
          throw providerErrorFromWire({ ...wireErrorOf(chunk) }, this.name);
        }
        // `choices: null` and usage-only chunks (`choices: []`) carry no text.
        const choice = chunk.choices?.[0];
        const content = choice?.delta?.content;
        if (content) {
          yield { type: 'text', text: content };
          if (signal.aborted) return;
        }
        if (choice?.finish_reason) finishReason = choice.finish_reason === 'length' ? 'length' : 'stop';
        if (chunk.usage) {
          usage = {
            type: 'usage',
            inputTokens: chunk.usage.prompt_tokens ?? 0,
            outputTokens: chunk.usage.completion_tokens ?? 0,
            cachedInputTokens: chunk.usage.prompt_tokens_details?.cached_tokens ?? 0,
          };
        }
      }
      if (signal.aborted) return;
      // Some servers end the body without `[DONE]`; a finish reason still proves it completed.
      if (!finished && finishReason === null) {
        throw new ProviderError('network', `${this.name}: the stream ended before the model finished — try again.`, null, this.name);
      }
      finished = true;
      if (usage) {
        yield usage;
        if (signal.aborted) return;
      }
      yield { type: 'done', finishReason: finishReason ?? 'stop' };
      // Only after `done` is delivered: the next request finds this socket back in the pool.
      await stream.finish();
    } finally {
      if (finished) void stream.finish();
      else stream.destroy();
    }
  }

  async close(): Promise<void> {
    this.agent.destroy();
  }

  private body(request: ModelRequest): Record<string, unknown> {
    const body: Record<string, unknown> = {
      model: request.model,
      messages: request.messages,
      stream: true,
      [this.options.maxTokensField ?? 'max_tokens']: request.maxOutputTokens,
    };
    if (this.options.includeUsage !== false) body.stream_options = { include_usage: true };
    if (request.temperature !== undefined) body.temperature = request.temperature;
    if (request.stop && request.stop.length > 0) body.stop = request.stop;
    if (request.prediction !== undefined && this.options.supportsPrediction) {
      body.prediction = { type: 'content', content: request.prediction };
    }
    return body;
  }

  private parse(data: string): ChatChunk {
    try {
      const parsed: unknown = JSON.parse(data);
      if (typeof parsed === 'object' && parsed !== null) return parsed as ChatChunk;
    } catch {
      // Falls through to the typed error below.
    }
    throw new ProviderError('bad_response', `${this.name} sent a stream event that is not JSON.`, null, this.name);
  }
}
