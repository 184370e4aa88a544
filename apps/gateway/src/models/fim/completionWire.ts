/**
 * The stream events of the two raw-completion endpoints, read into one shape: OpenAI-compatible
 * `/v1/completions` (`choices[0].text`, `[DONE]` at the end) and llama-server's `/infill`
 * (`content`, a final event with `stop: true`, no `[DONE]`).
 */
import type { ChatToolCallPiece } from '../chatToolCalls';
import type { FinishReason } from '../../core/ports/ModelProvider';

export interface WireUsage {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
}

/** One decoded event. `final`: the server said the generation is over. */
export interface CompletionChunk {
  text: string;
  finishReason: FinishReason | null;
  usage: WireUsage | null;
  final: boolean;
  /** An in-band `error` object, passed on for `providerErrorFromWire`. */
  error: unknown;
  /** Chat Completions only: the event's `delta.tool_calls` entries, when it has any. */
  toolCalls?: ChatToolCallPiece[];
}

const empty = (): CompletionChunk => ({ text: '', finishReason: null, usage: null, final: false, error: null });

function asObject(data: string): Record<string, unknown> | null {
  try {
    const parsed: unknown = JSON.parse(data);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    // The caller turns null into a typed bad_response.
    return null;
  }
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** `/v1/completions` (OpenAI legacy completions, vLLM, llama-server, Ollama); null: not JSON. */
export function readCompletionChunk(data: string): CompletionChunk | null {
  if (data === '[DONE]') return { ...empty(), final: true };
  const chunk = asObject(data);
  if (!chunk) return null;
  const out = empty();
  if (chunk.error !== undefined && chunk.error !== null) return { ...out, error: chunk };
  const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
  const choice = choices[0] as { text?: unknown; finish_reason?: unknown } | undefined;
  if (choice && typeof choice.text === 'string') out.text = choice.text;
  if (choice && typeof choice.finish_reason === 'string') out.finishReason = choice.finish_reason === 'length' ? 'length' : 'stop';
  const usage = chunk.usage as Record<string, unknown> | null | undefined;
  if (usage && typeof usage === 'object') {
    const details = usage.prompt_tokens_details as Record<string, unknown> | null | undefined;
    out.usage = { inputTokens: num(usage.prompt_tokens), outputTokens: num(usage.completion_tokens), cachedInputTokens: num(details?.cached_tokens) };
  }
  return out;
}

/** llama-server `/infill` (and `/completion`) stream events; null: not JSON. */
export function readInfillChunk(data: string): CompletionChunk | null {
  const chunk = asObject(data);
  if (!chunk) return null;
  const out = empty();
  if (chunk.error !== undefined && chunk.error !== null) return { ...out, error: chunk };
  if (typeof chunk.content === 'string') out.text = chunk.content;
  if (chunk.stop === true) {
    out.final = true;
    out.finishReason = chunk.stop_type === 'limit' ? 'length' : 'stop';
    const timings = chunk.timings as Record<string, unknown> | undefined;
    const evaluated = num(chunk.tokens_evaluated);
    // `tokens_cached` is what the slot reused; older servers only report timings.prompt_n (new tokens).
    const cached = chunk.tokens_cached !== undefined ? num(chunk.tokens_cached) : timings ? Math.max(0, evaluated - num(timings.prompt_n)) : 0;
    out.usage = { inputTokens: evaluated, outputTokens: num(chunk.tokens_predicted), cachedInputTokens: cached };
  }
  return out;
}
