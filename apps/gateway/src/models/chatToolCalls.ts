/**
 * Tool calls on the Chat Completions wire: the messages and tools of a request, and the
 * `delta.tool_calls` pieces of a streamed answer read into `tool-call` / `tool-call-delta` events.
 */
import type { ModelEvent, ModelMessage, ToolSpec } from '../core/ports/ModelProvider';

/** One entry of a chunk's `choices[0].delta.tool_calls`, as `parseChatChunk` reads it. */
export interface ChatToolCallPiece {
  /** Which call of the answer; servers that omit it get the entry's position. */
  index: number;
  id: string | null;
  name: string | null;
  /** The next piece of the call's JSON arguments ('' when the entry has none). */
  arguments: string;
}

export function chatMessages(messages: ModelMessage[]): unknown[] {
  return messages.map((message) => {
    if (message.role === 'tool') return { role: 'tool', tool_call_id: message.callId, content: message.content };
    if (message.role !== 'assistant' || !message.toolCalls?.length) return { role: message.role, content: message.content };
    return {
      role: 'assistant',
      // A call-only answer has no text: servers expect null there, not ''.
      content: message.content || null,
      tool_calls: message.toolCalls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })),
    };
  });
}

export function chatTools(tools: ToolSpec[]): unknown[] {
  return tools.map(({ name, description, parameters }) => ({ type: 'function', function: { name, description, parameters } }));
}

/**
 * The tool calls of one streamed answer. A call's first piece carries its id and name (some
 * servers repeat them later, or send the arguments with them, or the whole call at once); the
 * pieces after it carry arguments, passed on as they come.
 */
export class ChatToolCallReader {
  /** The wire indexes of the calls begun so far: a piece for an earlier one would interleave. */
  private readonly begun = new Set<number>();
  private wireIndex: number | null = null;
  /** How many calls the answer has made. */
  count = 0;

  /** Pushes the events of one chunk's pieces; returns what is wrong when they cannot be read in order. */
  read(pieces: ChatToolCallPiece[], push: (event: ModelEvent) => void): string | null {
    for (const piece of pieces) {
      if (piece.index !== this.wireIndex) {
        if (this.begun.has(piece.index)) return 'interleaved the arguments of two tool calls';
        if (piece.name === null) return 'began a tool call without its name';
        this.begun.add(piece.index);
        this.wireIndex = piece.index;
        const index = this.count++;
        // Ids only pair a call with its result, which goes back to the same server: one it left out is made up.
        push({ type: 'tool-call', index, id: piece.id ?? `call_${index}`, name: piece.name });
      }
      if (piece.arguments !== '') push({ type: 'tool-call-delta', index: this.count - 1, arguments: piece.arguments });
    }
    return null;
  }
}
