/**
 * Answers made of explicit tokens, for PacedTokenServer (B11, the agent thread): prose, then
 * optionally one function call whose JSON arguments stream one token per delta. The events are
 * the test-kit's Chat Completions chunks (`chatCompletionWire`: `delta.tool_calls[{index, id,
 * type: 'function', function: {name, arguments}}]`, then `finish_reason: 'tool_calls'`), each
 * delta exactly one of the answer's tokens.
 */
import { chatCompletionWire, type WireEvent } from '@flint/test-kit';

export interface PacedAnswer {
  /** Prose: one content delta per token. */
  text: string[];
  /** A function call after the prose: its JSON arguments, one argument delta per token. */
  call?: { name: string; arguments: string[] };
  /** `[token, marker]`: the token (prose first, then the call's) that completes each marker. */
  markers?: Array<[number, number]>;
}

export interface AnswerFrames {
  /** Events before the first token. */
  head: string;
  /**
   * Each token's events, whole (`data: {"id":"<wireId>"…`): an event that carries no token (the
   * call's head) goes out with the token after it, as a server writes them back to back.
   */
  tokens: string[];
  tail: string;
  /** Token → the marker it completes, or -1; null when the answer has no markers. */
  markerAt: Int32Array | null;
}

export function answerFrames(answer: PacedAnswer, model: string, includeUsage: boolean, wireId: string): AnswerFrames {
  const tokenCount = answer.text.length + (answer.call?.arguments.length ?? 0);
  const events = chatCompletionWire(
    {
      text: '',
      chunks: answer.text,
      // The call's id holds the response's (replaced per response), as real ids are unique.
      toolCalls: answer.call ? [{ name: answer.call.name, chunks: answer.call.arguments, id: `call_${wireId}` }] : undefined,
      usage: { inputTokens: 2_000, outputTokens: tokenCount, cachedInputTokens: 1_500 },
    },
    model,
    includeUsage,
    wireId,
  );
  const sse = (event: WireEvent) => `data: ${typeof event.payload === 'string' ? event.payload : JSON.stringify(event.payload)}\n\n`;
  let head = '';
  const tokens: string[] = [];
  let pending = '';
  for (const event of events) {
    if (!event.isText) {
      if (tokens.length === 0) head += sse(event);
      else pending += sse(event);
      continue;
    }
    tokens.push(pending + sse(event));
    pending = '';
  }
  if (tokens.length !== tokenCount) throw new Error(`the test-kit wire gave ${tokens.length} deltas for an answer of ${tokenCount} tokens`);
  let markerAt: Int32Array | null = null;
  if (answer.markers) {
    markerAt = new Int32Array(tokenCount).fill(-1);
    for (const [token, marker] of answer.markers) markerAt[token] = marker;
  }
  return { head, tokens, tail: pending, markerAt };
}
