/**
 * Reads one OpenAI Responses streaming event (the same JSON over SSE and over the WebSocket mode)
 * into what the adapter acts on. Events it has no use for (output_item.added, *.done, reasoning
 * summaries, …) are `ignored`, so new event types never break a stream.
 */
import type { ModelEvent } from './ModelProvider';
import { providerErrorFromWire, retryAfterMsFromHeaders, type WireProviderError } from './providerErrorFromWire';

export type ResponsesStep =
  | Extract<ModelEvent, { type: 'text' }>
  | { type: 'created'; responseId: string }
  | {
      type: 'finished';
      responseId: string | null;
      usage: Extract<ModelEvent, { type: 'usage' }> | null;
      finishReason: 'stop' | 'length';
    }
  | { type: 'failed'; error: WireProviderError }
  | { type: 'ignored' }
  | { type: 'malformed' };

const ignored: ResponsesStep = { type: 'ignored' };
const malformed: ResponsesStep = { type: 'malformed' };

interface WireResponse {
  id?: string;
  usage?: {
    input_tokens?: number;
    output_tokens?: number;
    input_tokens_details?: { cached_tokens?: number } | null;
  } | null;
  incomplete_details?: { reason?: string } | null;
  error?: { code?: string | null; message?: string | null } | null;
}

interface WireEvent {
  type?: unknown;
  delta?: unknown;
  response?: WireResponse | null;
  /** WebSocket error events: `{type: 'error', status, error: {code, type, message}, headers?}`. */
  status?: number;
  error?: { code?: string | null; type?: string | null; message?: string | null } | null;
  headers?: Record<string, string>;
  /** SSE error events: `{type: 'error', code, message, param}`. */
  code?: string | null;
  message?: string | null;
}

function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  const lower: Record<string, string> = {};
  for (const key of Object.keys(headers)) lower[key.toLowerCase()] = headers[key]!;
  return lower;
}

export function readResponsesEvent(raw: unknown, provider: string): ResponsesStep {
  if (typeof raw !== 'object' || raw === null) return malformed;
  const event = raw as WireEvent;
  switch (event.type) {
    case 'response.output_text.delta':
      if (typeof event.delta !== 'string') return malformed;
      return event.delta.length > 0 ? { type: 'text', text: event.delta } : ignored;
    case 'response.created':
      return typeof event.response?.id === 'string' ? { type: 'created', responseId: event.response.id } : ignored;
    case 'response.completed':
    case 'response.incomplete': {
      const response = event.response ?? {};
      const usage = response.usage;
      return {
        type: 'finished',
        responseId: response.id ?? null,
        usage: usage
          ? {
              type: 'usage',
              inputTokens: usage.input_tokens ?? 0,
              outputTokens: usage.output_tokens ?? 0,
              cachedInputTokens: usage.input_tokens_details?.cached_tokens ?? 0,
            }
          : null,
        // Only running out of tokens is "length"; a content-filter stop is still a stop.
        finishReason: response.incomplete_details?.reason === 'max_output_tokens' ? 'length' : 'stop',
      };
    }
    case 'response.failed': {
      const error = event.response?.error;
      return { type: 'failed', error: providerErrorFromWire({ code: error?.code, message: error?.message }, provider) };
    }
    case 'error': {
      const error = event.error ?? { code: event.code, message: event.message };
      const retryAfterMs = event.headers ? retryAfterMsFromHeaders(lowerCaseKeys(event.headers)) : null;
      return {
        type: 'failed',
        error: providerErrorFromWire(
          { status: event.status, code: error.code, type: error.type ?? null, message: error.message, retryAfterMs },
          provider,
        ),
      };
    }
    default:
      return typeof event.type === 'string' ? ignored : malformed;
  }
}

/** The events that end a stream: usage (when the server reported it), then done. */
export async function* finishedEvents(
  step: Extract<ResponsesStep, { type: 'finished' }>,
  signal: AbortSignal,
): AsyncGenerator<ModelEvent, void, undefined> {
  if (step.usage) {
    yield step.usage;
    if (signal.aborted) return;
  }
  yield { type: 'done', finishReason: step.finishReason };
}
