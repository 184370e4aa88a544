/** How a Responses answer's function-call events become tool-call events, including what servers should not send. */
import { describe, expect, it } from 'vitest';
import { ResponsesOutput } from './ResponsesOutput';
import type { FunctionCallPiece } from './readResponsesEvent';

const begin = (itemId: string, outputIndex: number, callId: string, args = ''): FunctionCallPiece => ({ kind: 'begin', itemId, outputIndex, callId, name: 'read_file', arguments: args });
const args = (itemId: string | null, outputIndex: number | null, delta: string): FunctionCallPiece => ({ kind: 'arguments', itemId, outputIndex, delta });
const done = (itemId: string, outputIndex: number, all: string): FunctionCallPiece => ({ kind: 'done', itemId, outputIndex, arguments: all });

describe('ResponsesOutput', () => {
  it('numbers calls from 0 and finds a call by item id, or by output index when the event has no item id', () => {
    const output = new ResponsesOutput('openai');
    output.addText('Reading.');
    expect(output.call(begin('fc_1', 1, 'call_a'))).toEqual([{ type: 'tool-call', index: 0, id: 'call_a', name: 'read_file' }]);
    expect(output.call(args('fc_1', 1, '{"path":'))).toEqual([{ type: 'tool-call-delta', index: 0, arguments: '{"path":' }]);
    expect(output.call(args(null, 1, '"a.ts"}'))).toEqual([{ type: 'tool-call-delta', index: 0, arguments: '"a.ts"}' }]);
    expect(output.call(done('fc_1', 1, '{"path":"a.ts"}'))).toEqual([]);
    expect(output.call(begin('fc_2', 2, 'call_b', '{}'))).toEqual([
      { type: 'tool-call', index: 1, id: 'call_b', name: 'read_file' },
      { type: 'tool-call-delta', index: 1, arguments: '{}' },
    ]);
    expect(output.finishReason('stop')).toBe('tool_calls');
    expect(output.finishReason('length')).toBe('length');
    expect(output.message()).toEqual({
      role: 'assistant',
      content: 'Reading.',
      toolCalls: [
        { id: 'call_a', name: 'read_file', arguments: '{"path":"a.ts"}' },
        { id: 'call_b', name: 'read_file', arguments: '{}' },
      ],
    });
  });

  it('passes on the arguments of a server that streams none until the call is done', () => {
    const output = new ResponsesOutput('openai');
    output.call(begin('fc_1', 0, 'call_a'));
    expect(output.call(done('fc_1', 0, '{"path":"a.ts"}'))).toEqual([{ type: 'tool-call-delta', index: 0, arguments: '{"path":"a.ts"}' }]);
  });

  it('ends an answer without calls with stop, and gives it back as a plain message', () => {
    const output = new ResponsesOutput('openai');
    output.addText('Hi.');
    expect(output.finishReason('stop')).toBe('stop');
    expect(output.message()).toEqual({ role: 'assistant', content: 'Hi.' });
  });

  it('fails as bad_response on arguments it cannot pass on in order or exactly', () => {
    const interleaved = new ResponsesOutput('openai');
    interleaved.call(begin('fc_1', 0, 'call_a'));
    interleaved.call(begin('fc_2', 1, 'call_b'));
    expect(() => interleaved.call(args('fc_1', 0, '{}'))).toThrow(expect.objectContaining({ code: 'bad_response' }));
    const unknown = new ResponsesOutput('openai');
    expect(() => unknown.call(args('fc_9', 9, '{}'))).toThrow(expect.objectContaining({ code: 'bad_response' }));
    const rewritten = new ResponsesOutput('openai');
    rewritten.call(begin('fc_1', 0, 'call_a', '{"path":"a'));
    expect(() => rewritten.call(done('fc_1', 0, '{"path":"b.ts"}'))).toThrow(expect.objectContaining({ code: 'bad_response' }));
  });
});
