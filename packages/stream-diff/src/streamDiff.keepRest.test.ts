import { propertyParameters } from '@flint/test-kit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StreamingDiff, applyOps, type DiffOp, type StreamingDiffOptions } from './index';
import { chunking, chunksOf, rewrite } from '../test/testArbitraries';

/** Where the ops' cursor ends in the original. */
const reachOf = (ops: readonly DiffOp[]): number => ops.reduce((n, op) => n + (op.type === 'insert' ? 0 : op.length), 0);

/** Streams `chunks`, then ends as a stream that broke off; returns each call's ops. */
function breakOff(original: string, chunks: readonly string[], options: StreamingDiffOptions = {}) {
  const diff = new StreamingDiff(original, options);
  const pushed = chunks.flatMap((c) => diff.push(c));
  return { pushed, rest: diff.finish({ keepRest: true }) };
}

describe('StreamingDiff.finish({keepRest}) — a stream that broke off', () => {
  it('[D19] for any cut and chunking: the received text, then the original it did not reach, and no trailing delete', () => {
    const someOptions = fc.constantFrom<StreamingDiffOptions>({}, { maxPending: 96 });
    fc.assert(
      fc.property(rewrite(30), fc.nat(), chunking, someOptions, ({ original, text }, cut, sizes, options) => {
        const received = text.slice(0, cut % (text.length + 1));
        const { pushed, rest } = breakOff(original, chunksOf(received, sizes), options);
        const reach = reachOf([...pushed, ...rest]);
        expect(rest.at(-1)?.type, 'a trailing delete').not.toBe('delete');
        expect(reach, 'the cursor went back').toBeGreaterThanOrEqual(reachOf(pushed));
        expect(applyOps(original, [...pushed, ...rest]), 'not the received text plus the rest').toBe(received + original.slice(reach));
      }),
      propertyParameters(300),
    );
  });

  it('[D19] a rewrite cut short after three lines keeps all of the original it had not reached', () => {
    const original = 'export function total(items) {\n  let sum = 0;\n  for (const item of items) {\n    sum += item.price * item.qty;\n  }\n  return sum;\n}\n';
    const received = 'export const total = (items) =>\n  items.reduce((sum, it) => sum\n    + it.price * it.qty, 0);\n';
    const { pushed, rest } = breakOff(original, [received], { maxPending: 96 });
    // Only the first line is reached: the new first line pairs with it ([D20]: more than half in
    // common) and replaces it. finish() would align the new lines with scraps of the whole
    // function, `const ` of its loop included, and delete the rest.
    expect(applyOps(original, [...pushed, ...rest])).toBe(received + original.slice(original.indexOf('\n') + 1));
  });

  it('[D19] a mostly unchanged rewrite cut mid-line keeps its lines and the original after the cut', () => {
    const original = 'function add(a, b) {\n  return a + b;\n}\nfunction sub(a, b) {\n  return a - b;\n}\n';
    const received = 'function add(a: number, b: number) {\n  return a + b;\n}\nfunction sub(a: num';
    const { pushed, rest } = breakOff(original, [received]);
    expect(applyOps(original, [...pushed, ...rest])).toBe(`${received}, b) {\n  return a - b;\n}\n`);
  });

  it('[D13][D19] after finish({keepRest}) the stream is over', () => {
    const diff = new StreamingDiff('abc\n');
    expect(diff.finish({ keepRest: true })).toEqual([]);
    expect(() => diff.push('x')).toThrow();
    expect(() => diff.finish()).toThrow();
  });
});
