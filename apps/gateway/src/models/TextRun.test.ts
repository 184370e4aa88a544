import { describe, expect, it } from 'vitest';
import { mergeDeltas } from './TextRun';

describe('mergeDeltas', () => {
  it('joins text, and a call’s argument pieces, counting the tokens they hold', () => {
    expect(mergeDeltas({ type: 'text', text: 'a', tokens: 2 }, { type: 'text', text: 'b' })).toEqual({ type: 'text', text: 'ab', tokens: 3 });
    expect(mergeDeltas({ type: 'tool-call-delta', index: 0, arguments: '{"pa' }, { type: 'tool-call-delta', index: 0, arguments: 'tch"', tokens: 4 })).toEqual({
      type: 'tool-call-delta',
      index: 0,
      arguments: '{"patch"',
      tokens: 5,
    });
  });

  it('never joins pieces of two calls, or a piece with text', () => {
    expect(mergeDeltas({ type: 'tool-call-delta', index: 0, arguments: 'a' }, { type: 'tool-call-delta', index: 1, arguments: 'b' })).toBeNull();
    expect(mergeDeltas({ type: 'text', text: 'a' }, { type: 'tool-call-delta', index: 0, arguments: 'b' })).toBeNull();
  });
});
