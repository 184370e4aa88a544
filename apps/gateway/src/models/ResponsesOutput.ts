/**
 * What one Responses answer made, as it streams: its text and its function calls. It numbers the
 * calls for `tool-call` events, sends each piece of arguments on as it comes, and gives back the
 * answer as the assistant message a caller sends to continue the thread (ResponsesThreads).
 */
import { ProviderError, type FinishReason, type ModelEvent, type ModelMessage, type ToolCall } from '../core/ports/ModelProvider';
import type { FunctionCallPiece } from './readResponsesEvent';

export class ResponsesOutput {
  private readonly text: string[] = [];
  private readonly calls: ToolCall[] = [];
  private readonly byItemId = new Map<string, number>();
  private readonly byOutputIndex = new Map<number, number>();

  constructor(private readonly provider: string) {}

  /** Nothing was streamed yet: a refused request can still be sent again. */
  get isEmpty(): boolean {
    return this.text.length === 0 && this.calls.length === 0;
  }

  addText(delta: string): void {
    this.text.push(delta);
  }

  /** The events for one piece of a call; throws `bad_response` when the server's calls cannot be followed. */
  call(piece: FunctionCallPiece): ModelEvent[] {
    const events: ModelEvent[] = [];
    if (piece.kind === 'begin') {
      const index = this.calls.length;
      this.calls.push({ id: piece.callId, name: piece.name, arguments: '' });
      if (piece.itemId !== null) this.byItemId.set(piece.itemId, index);
      if (piece.outputIndex !== null) this.byOutputIndex.set(piece.outputIndex, index);
      events.push({ type: 'tool-call', index, id: piece.callId, name: piece.name });
      this.addArguments(index, piece.arguments, events);
      return events;
    }
    const index = (piece.itemId !== null ? this.byItemId.get(piece.itemId) : undefined) ?? (piece.outputIndex !== null ? this.byOutputIndex.get(piece.outputIndex) : undefined);
    if (index === undefined) throw this.badResponse('sent arguments for a function call it had not begun');
    if (piece.kind === 'arguments') {
      this.addArguments(index, piece.delta, events);
      return events;
    }
    // The whole arguments come again at the end: what was not streamed (a server that streams no
    // deltas) follows now; anything else would leave the caller with other arguments than the server's.
    const streamed = this.calls[index]!.arguments;
    if (!piece.arguments.startsWith(streamed)) throw this.badResponse('ended a function call with other arguments than it streamed');
    this.addArguments(index, piece.arguments.slice(streamed.length), events);
    return events;
  }

  /** A completed answer that called functions waits for their results. */
  finishReason(reason: 'stop' | 'length'): FinishReason {
    return reason === 'stop' && this.calls.length > 0 ? 'tool_calls' : reason;
  }

  /** The answer exactly as streamed, as the message the caller sends back with the next request. */
  message(): ModelMessage {
    const content = this.text.join('');
    if (this.calls.length === 0) return { role: 'assistant', content };
    return { role: 'assistant', content, toolCalls: this.calls.map((call) => ({ ...call })) };
  }

  private addArguments(index: number, delta: string, events: ModelEvent[]): void {
    if (delta === '') return;
    // Events promise one call's arguments after another's, never mixed.
    if (index !== this.calls.length - 1) throw this.badResponse('interleaved the arguments of two function calls');
    this.calls[index]!.arguments += delta;
    events.push({ type: 'tool-call-delta', index, arguments: delta });
  }

  private badResponse(what: string): ProviderError {
    return new ProviderError('bad_response', `${this.provider} ${what}.`, null, this.provider);
  }
}
