/**
 * Per-thread continuation state for the Responses API: the last completed response of each
 * thread and the messages it covers, so a follow-up sends only what is new with
 * `previous_response_id` instead of the whole conversation.
 *
 * The response's own output is recorded as the assistant message a caller sends back: its text
 * and its function calls exactly as streamed. A tool loop that appends that message and the
 * calls' results continues with just the `function_call_output` items; any other difference in
 * the history sends everything, so the server never continues from what the caller did not send.
 */
import type { ModelMessage, ModelRequest, ToolCall } from '../core/ports/ModelProvider';

interface Chain {
  responseId: string;
  /** The request's messages plus the response's own output, as the server holds them. */
  messages: ModelMessage[];
  /** With `store: false` the server keeps the response only in this connection's memory. */
  connection: object | null;
}

export interface InputPlan {
  input: ModelMessage[];
  previousResponseId: string | null;
}

export class ResponsesThreads {
  // Insertion order doubles as recency: a use re-inserts, so the first key is the oldest.
  private readonly chains = new Map<string, Chain>();

  constructor(private readonly maxThreads = 1_000) {}

  /**
   * What to send for `request` on `connection` (null: a transport where only stored responses
   * can be continued). Falls back to the full input when there is no chain, the chain lives on
   * another connection, or the request no longer starts with the chain's messages (the context
   * was trimmed or edited).
   */
  plan(request: ModelRequest, connection: object | null): InputPlan {
    const chain = request.threadId === undefined ? undefined : this.chains.get(request.threadId);
    const full = { input: request.messages, previousResponseId: null };
    if (!chain) return full;
    if (chain.connection !== null && chain.connection !== connection) return full;
    const known = chain.messages;
    if (known.length >= request.messages.length) return full;
    for (let i = 0; i < known.length; i++) {
      if (!sameMessage(known[i]!, request.messages[i]!)) return full;
    }
    return { input: request.messages.slice(known.length), previousResponseId: chain.responseId };
  }

  /**
   * Records a completed response and its `output` (ResponsesOutput.message); `connection` null
   * when the server stored it (`store: true`).
   */
  remember(request: ModelRequest, responseId: string, output: ModelMessage, connection: object | null): void {
    if (request.threadId === undefined) return;
    this.chains.delete(request.threadId);
    this.chains.set(request.threadId, { responseId, messages: [...request.messages, output], connection });
    if (this.chains.size > this.maxThreads) this.chains.delete(this.chains.keys().next().value!);
  }

  /** The server no longer knows the thread's last response: the next request sends everything. */
  forget(threadId: string | undefined): void {
    if (threadId !== undefined) this.chains.delete(threadId);
  }

  /** The connection the thread's chain lives on, so the pool can prefer it. */
  connectionOf(threadId: string | undefined): object | null {
    return threadId === undefined ? null : (this.chains.get(threadId)?.connection ?? null);
  }
}

function sameMessage(a: ModelMessage, b: ModelMessage): boolean {
  if (a.role !== b.role || a.content !== b.content) return false;
  if (a.role === 'tool' && b.role === 'tool') return a.callId === b.callId;
  if (a.role === 'assistant' && b.role === 'assistant') return sameCalls(a.toolCalls ?? [], b.toolCalls ?? []);
  return true;
}

function sameCalls(a: ToolCall[], b: ToolCall[]): boolean {
  return a.length === b.length && a.every((call, i) => call.id === b[i]!.id && call.name === b[i]!.name && call.arguments === b[i]!.arguments);
}
