/**
 * Reads one OpenAI Responses streaming event (the same JSON over SSE and over the WebSocket mode)
 * into what the adapter acts on. Events it has no use for (message items added, text *.done,
 * reasoning summaries, …) are `ignored`, so new event types never break a stream.
 */
import type { FinishReason, ModelEvent } from '../core/ports/ModelProvider';
import { providerErrorFromWire, retryAfterMsFromHeaders, type WireProviderError } from './providerErrorFromWire';

/**
 * A piece of a function call: it begins (an output item added), its arguments stream, it is done
 * (the whole arguments again). `itemId` / `outputIndex` say which call a piece belongs to.
 */
export type FunctionCallPiece = { itemId: string | null; outputIndex: number | null } & (
  | { kind: 'begin'; callId: string; name: string; arguments: string }
  | { kind: 'arguments'; delta: string }
  | { kind: 'done'; arguments: string }
);

export type ResponsesStep =
  | Extract<ModelEvent, { type: 'text' }>
  | { type: 'function-call'; piece: FunctionCallPiece }
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
  item?: { type?: unknown; id?: unknown; call_id?: unknown; name?: unknown; arguments?: unknown } | null;
  item_id?: unknown;
  output_index?: unknown;
  arguments?: unknown;
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
    case 'response.output_item.added':
    case 'response.output_item.done': {
      const item = event.item;
      if (item?.type !== 'function_call') return ignored;
      const where = { itemId: typeof item.id === 'string' ? item.id : null, outputIndex: outputIndexOf(event) };
      const args = typeof item.arguments === 'string' ? item.arguments : null;
      if (event.type === 'response.output_item.done') return args === null ? ignored : { type: 'function-call', piece: { ...where, kind: 'done', arguments: args } };
      if (typeof item.call_id !== 'string' || typeof item.name !== 'string') return malformed;
      return { type: 'function-call', piece: { ...where, kind: 'begin', callId: item.call_id, name: item.name, arguments: args ?? '' } };
    }
    case 'response.function_call_arguments.delta':
      if (typeof event.delta !== 'string') return malformed;
      return { type: 'function-call', piece: { ...callOf(event), kind: 'arguments', delta: event.delta } };
    case 'response.function_call_arguments.done':
      if (typeof event.arguments !== 'string') return malformed;
      return { type: 'function-call', piece: { ...callOf(event), kind: 'done', arguments: event.arguments } };
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

function outputIndexOf(event: WireEvent): number | null {
  return typeof event.output_index === 'number' ? event.output_index : null;
}

/** Which call an arguments event belongs to. */
function callOf(event: WireEvent): { itemId: string | null; outputIndex: number | null } {
  return { itemId: typeof event.item_id === 'string' ? event.item_id : null, outputIndex: outputIndexOf(event) };
}

/** The events that end a stream: usage (when the server reported it), then done. */
export async function* finishedEvents(
  step: Extract<ResponsesStep, { type: 'finished' }>,
  finishReason: FinishReason,
  signal: AbortSignal,
): AsyncGenerator<ModelEvent, void, undefined> {
  if (step.usage) {
    yield step.usage;
    if (signal.aborted) return;
  }
  yield { type: 'done', finishReason };
}
