/**
 * One interface for every model backend (DESIGN §6): OpenAI Responses over WebSocket (SSE
 * fallback), OpenAI-compatible Chat Completions SSE, and embedded llama.cpp.
 */

/** Which model serves a request; configured per deployment, switchable per request. */
export type Route = 'fast' | 'deep' | 'complete';

export type ModelMessage =
  | { role: 'system' | 'user'; content: string }
  /** `toolCalls`: the calls the model made in this answer, after its text (agent thread). */
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[] }
  /** What a tool call returned, sent back to the model (Chat: a `tool` message; Responses: `function_call_output`). */
  | { role: 'tool'; callId: string; content: string };

/** A function the model may call (the agent thread's tools). `parameters` is a JSON Schema object. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** A tool call as the model made it: `arguments` is the JSON text it wrote. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface ModelRequest {
  model: string;
  /** Stable prefix first (system, files), so provider prompt caches hit. */
  messages: ModelMessage[];
  maxOutputTokens: number;
  temperature?: number;
  /** The text the output will mostly repeat (a rewrite's original): sent as a predicted output where supported. */
  prediction?: string;
  /**
   * The conversation this request continues. Providers use it to keep state warm: the Responses
   * adapter sends only the messages after the last response of this thread with
   * `previous_response_id`; the embedded adapter reuses the thread's KV cache.
   */
  threadId?: string;
  stop?: string[];
  /**
   * Functions the model may call. Only sent to providers whose route says `supportsTools`; the
   * model's calls stream back as `tool-call` / `tool-call-delta` events.
   */
  tools?: ToolSpec[];
  /**
   * The same rewrite as fill-in-the-middle: the text around the region (trimmed like the
   * messages). Models that cannot follow instructions (the bundled demo model) regenerate the
   * region from it; chat models ignore it.
   */
  infill?: { prefix: string; suffix: string };
}

/** A raw prompt, sent as-is without a chat template: fill-in-the-middle with the model's FIM tokens. */
export interface PromptRequest {
  model: string;
  prompt: string;
  maxOutputTokens: number;
  temperature?: number;
  stop?: string[];
}

/** Native fill-in-the-middle (llama-server `/infill`, the embedded model's FIM tokens). */
export interface InfillRequest {
  maxOutputTokens: number;
  temperature?: number;
  stop?: string[];
  /** Requests in one thread (e.g. one editor buffer) may reuse a KV cache. */
  threadId?: string;
  model?: string;
  /** Related code from other files, placed before the prefix (llama-server `input_extra`). */
  extra?: Array<{ filename: string; text: string }>;
}

/** `tool_calls`: the answer ended to let the caller run the tools it called. */
export type FinishReason = 'stop' | 'length' | 'tool_calls';

export type ModelEvent =
  /** `tokens`: how many model tokens the text holds (several when one network read carried them); 1 if absent. */
  | { type: 'text'; text: string; tokens?: number }
  /**
   * The model began a tool call. `index` numbers the calls of one answer from 0, in order; its
   * arguments follow as `tool-call-delta` pieces of JSON text (concatenated, the whole
   * `arguments`). A call's `tool-call` comes before its deltas; calls do not interleave.
   */
  | { type: 'tool-call'; index: number; id: string; name: string }
  /** `tokens`: how many model tokens the piece holds (several when deltas were merged); 1 if absent. */
  | { type: 'tool-call-delta'; index: number; arguments: string; tokens?: number }
  | { type: 'usage'; inputTokens: number; outputTokens: number; cachedInputTokens: number }
  | { type: 'done'; finishReason: FinishReason };

export type ProviderErrorCode =
  /** No provider is configured for this route. */
  | 'not_configured'
  /** Bad or missing API key (401/403). */
  | 'auth'
  /** 429; `retryAfterMs` says when to try again. */
  | 'rate_limited'
  /** The account's quota or budget is spent (429 insufficient_quota, 402). */
  | 'quota'
  /** The prompt does not fit the model's window. */
  | 'context_length'
  /** 5xx / 529 / overloaded_error. */
  | 'overloaded'
  /** Connection refused, reset, DNS, TLS, a stall past the idle timeout. */
  | 'network'
  /** The provider answered something we cannot parse. */
  | 'bad_response'
  /** The circuit breaker is open after repeated failures: fail fast until it half-opens. */
  | 'circuit_open';

/** What a provider said about a failed request besides its error, for logs and its support desk. */
export interface ProviderErrorDetails {
  /** The HTTP status it answered with (or the status a WebSocket error event carries). */
  status?: number | null;
  /** Its id for the request: the `x-request-id` response header, or the stream's own id. */
  requestId?: string | null;
}

/** A provider failure as a value with a code, never classified by message text. */
export class ProviderError extends Error {
  /** Null when none came: the connection failed first, or the failure came mid-stream. */
  readonly status: number | null;
  private knownRequestId: string | null;

  constructor(
    readonly code: ProviderErrorCode,
    message: string,
    readonly retryAfterMs: number | null = null,
    readonly provider = '',
    details: ProviderErrorDetails = {},
  ) {
    super(message);
    this.name = 'ProviderError';
    this.status = details.status ?? null;
    this.knownRequestId = details.requestId ?? null;
  }

  /** Null when the provider gave none, or the failure came before its answer did. */
  get requestId(): string | null {
    return this.knownRequestId;
  }

  /**
   * Names the provider's request, unless a more specific id is already known. For adapters: a
   * connection that breaks mid-stream fails in the transport, which never reads the answer's
   * envelope, so the adapter that read it adds the id as the error passes through.
   */
  withRequestId(requestId: string | null): this {
    this.knownRequestId ??= requestId;
    return this;
  }
}

/** `error` with the provider's request id added when it is a ProviderError (see `withRequestId`). */
export function withRequestId(error: unknown, requestId: string | null): unknown {
  return error instanceof ProviderError ? error.withRequestId(requestId) : error;
}

/** A provider endpoint's circuit breaker: closed lets requests through, open refuses them, half-open lets one trial through. */
export type CircuitState = 'closed' | 'open' | 'half-open';

export interface ModelProvider {
  /** e.g. "openai-responses", "openai-chat", "embedded". */
  readonly kind: string;
  /**
   * Streams one generation. Events arrive in order: any number of `text`, `tool-call` and
   * `tool-call-delta`, at most one `usage`, then exactly one `done`. Failures throw `ProviderError` from the iterator.
   * Abort: once `signal` aborts, the iterator ends (returns, no throw) without yielding more, and
   * the upstream request is closed (HTTP response destroyed / WS `response.cancel` sent / the
   * embedded generation stopped) so the provider stops spending tokens.
   */
  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent>;
  /**
   * Optional: completes a raw prompt (OpenAI-compatible `/v1/completions`), for FIM templates.
   * Same events, abort and error contract as `stream`.
   */
  completePrompt?(request: PromptRequest, signal: AbortSignal): AsyncIterable<ModelEvent>;
  /**
   * Optional: native fill-in-the-middle between `prefix` and `suffix`. Same contract as `stream`;
   * an adapter configured without it fails with `not_configured`.
   */
  infill?(prefix: string, suffix: string, request: InfillRequest, signal: AbortSignal): AsyncIterable<ModelEvent>;
  /** Closes kept-alive connections and child processes. */
  close(): Promise<void>;
}
