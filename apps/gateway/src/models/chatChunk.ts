/**
 * Reading one Chat Completions stream event (the `data:` of a `chat.completion.chunk`).
 */
import type { CompletionChunk } from './fim/completionWire';

interface ChatChunk {
  choices?: Array<{ delta?: { content?: string | null } | null; finish_reason?: string | null } | null> | null;
  usage?: {
    prompt_tokens?: number;
    completion_tokens?: number;
    prompt_tokens_details?: { cached_tokens?: number } | null;
  } | null;
  error?: unknown;
}

/** The full reading: `choices[0].delta.content`; `choices: null` and usage-only chunks carry no text. */
export function parseChatChunk(data: string): CompletionChunk | null {
  if (data === '[DONE]') return { text: '', finishReason: null, usage: null, final: true, error: null };
  let chunk: ChatChunk;
  try {
    const parsed: unknown = JSON.parse(data);
    if (typeof parsed !== 'object' || parsed === null) return null;
    chunk = parsed as ChatChunk;
  } catch {
    // The caller turns null into a typed bad_response.
    return null;
  }
  if (chunk.error !== undefined && chunk.error !== null) return { text: '', finishReason: null, usage: null, final: false, error: chunk };
  const choice = chunk.choices?.[0];
  const finish = choice?.finish_reason;
  return {
    text: choice?.delta?.content ?? '',
    finishReason: finish ? (finish === 'length' ? 'length' : 'stop') : null,
    usage: chunk.usage
      ? {
          inputTokens: chunk.usage.prompt_tokens ?? 0,
          outputTokens: chunk.usage.completion_tokens ?? 0,
          cachedInputTokens: chunk.usage.prompt_tokens_details?.cached_tokens ?? 0,
        }
      : null,
    final: false,
    error: null,
  };
}
