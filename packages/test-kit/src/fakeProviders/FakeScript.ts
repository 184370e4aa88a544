/**
 * What a fake provider answers to one request: the text, how it is cut and paced, and the fault
 * to inject. Tests script faults by name (`fakeFaults.rateLimited(...)`) rather than by bytes.
 */

export type FakeFault =
  /** Answers with this status before streaming anything (HTTP), or an `error` event (WebSocket). */
  | { kind: 'status'; status: number; code?: string; type?: string; message?: string; headers?: Record<string, string> }
  /** Cuts the TCP connection (WebSocket: terminates it) after `afterChunks` text deltas. */
  | { kind: 'disconnect'; afterChunks: number }
  /** Sends a data line that is not JSON after `afterChunks` text deltas. */
  | { kind: 'garbage'; afterChunks: number }
  /** Stops sending after `afterChunks` text deltas but keeps the connection open. */
  | { kind: 'stall'; afterChunks: number }
  /** The provider reports a failure in-band (Responses `response.failed`, a Chat `error` chunk). */
  | { kind: 'failed'; afterChunks: number; code: string; message?: string };

export interface FakeScript {
  /** The whole text to stream. */
  text: string;
  /** Cut `text` into deltas of this many UTF-16 units (default 4); ignored when `chunks` is set. */
  chunkChars?: number;
  /** Explicit deltas; their concatenation replaces `text`. */
  chunks?: string[];
  /** Wait between deltas (default 0: as fast as the socket takes it). */
  delayMs?: number;
  /** Pace deltas at this rate instead (one delta counts as one token); `delayMs` wins if both are set. */
  tokensPerSecond?: number;
  finishReason?: 'stop' | 'length';
  /**
   * Function calls the answer makes after its text, their JSON arguments streamed in deltas of
   * `chunkChars` (paced like text); the answer then ends with `tool_calls`.
   */
  toolCalls?: FakeToolCall[];
  /**
   * Pause after this many deltas (text and arguments alike) until the test calls the server's
   * `release()`: the client has had those while the rest is held back. Unlike the `stall` fault,
   * the answer then goes on to its end.
   */
  holdAfterChunks?: number;
  usage?: { inputTokens: number; outputTokens: number; cachedInputTokens: number };
  fault?: FakeFault;
  /** SSE line ending (default "\n"). */
  lineEnding?: '\n' | '\r\n';
  /** Interleave `: ping` comment lines, as proxies and some providers do. */
  keepAliveComments?: boolean;
  /** Interleave Chat chunks with `choices: null` (some OpenAI-compatible servers send them). */
  nullChoices?: boolean;
  /**
   * Write the SSE body in pieces of this many bytes, each its own socket write, so events,
   * CRLF pairs and multi-byte UTF-8 characters are split at arbitrary positions.
   */
  splitEveryBytes?: number;
}

export interface FakeToolCall {
  name: string;
  /** The arguments' JSON text, as the model writes it; ignored when `chunks` is set. */
  arguments?: string;
  /** Explicit argument deltas, cut anywhere (inside an escape, between surrogate halves); their concatenation replaces `arguments`. */
  chunks?: string[];
  id?: string;
}

export const defaultFakeText = 'Hello from the fake provider: 1k tok/s, “quotes”, émoji 🚀 and 中文.';

/** The deltas a script streams. */
export function scriptChunks(script: FakeScript): string[] {
  if (script.chunks) return script.chunks;
  const size = script.chunkChars ?? 4;
  const chunks: string[] = [];
  // Array.from walks code points, so a default chunk never holds half a surrogate pair.
  const points = Array.from(script.text);
  for (let i = 0; i < points.length; i += size) chunks.push(points.slice(i, i + size).join(''));
  return chunks;
}

/** A tool call's argument deltas: its `chunks`, else its arguments cut like text. */
export function argumentChunks(script: FakeScript, call: FakeToolCall): string[] {
  if (call.chunks) return call.chunks;
  const size = script.chunkChars ?? 4;
  const chunks: string[] = [];
  const points = Array.from(call.arguments ?? '');
  for (let i = 0; i < points.length; i += size) chunks.push(points.slice(i, i + size).join(''));
  return chunks;
}

export function callArguments(call: FakeToolCall): string {
  return call.chunks ? call.chunks.join('') : (call.arguments ?? '');
}

export function scriptText(script: FakeScript): string {
  return script.chunks ? script.chunks.join('') : script.text;
}

export function scriptUsage(script: FakeScript): { inputTokens: number; outputTokens: number; cachedInputTokens: number } {
  return script.usage ?? { inputTokens: 42, outputTokens: scriptChunks(script).length, cachedInputTokens: 32 };
}

/** Named faults with the bodies real providers send. */
export const fakeFaults = {
  unauthorized: (): FakeFault => ({
    kind: 'status',
    status: 401,
    code: 'invalid_api_key',
    type: 'invalid_request_error',
    message: 'Incorrect API key provided.',
  }),
  rateLimited: (retry: { retryAfterS?: number; retryAfterMs?: number } = {}): FakeFault => ({
    kind: 'status',
    status: 429,
    code: 'rate_limit_exceeded',
    type: 'requests',
    message: 'Rate limit reached for requests.',
    headers: {
      ...(retry.retryAfterS === undefined ? {} : { 'retry-after': String(retry.retryAfterS) }),
      ...(retry.retryAfterMs === undefined ? {} : { 'retry-after-ms': String(retry.retryAfterMs) }),
    },
  }),
  insufficientQuota: (): FakeFault => ({
    kind: 'status',
    status: 429,
    code: 'insufficient_quota',
    type: 'insufficient_quota',
    message: 'You exceeded your current quota, please check your plan and billing details.',
  }),
  contextLength: (): FakeFault => ({
    kind: 'status',
    status: 400,
    code: 'context_length_exceeded',
    type: 'invalid_request_error',
    message: "This model's maximum context length is 128000 tokens.",
  }),
  serverError: (status = 500): FakeFault => ({
    kind: 'status',
    status,
    type: 'server_error',
    message: 'The server had an error while processing your request.',
  }),
  disconnect: (afterChunks = 1): FakeFault => ({ kind: 'disconnect', afterChunks }),
  garbage: (afterChunks = 1): FakeFault => ({ kind: 'garbage', afterChunks }),
  stall: (afterChunks = 1): FakeFault => ({ kind: 'stall', afterChunks }),
  failed: (code = 'server_error', afterChunks = 1): FakeFault => ({ kind: 'failed', afterChunks, code }),
};
