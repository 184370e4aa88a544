import { propertyParameters } from '@flint/test-kit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mergeSpans, type LineSpan } from './lineSpans';

describe('mergeSpans', () => {
  it('covers exactly the same lines with disjoint, non-adjacent spans in order', () => {
    const span = fc.record({ first: fc.integer({ min: 1, max: 60 }), size: fc.integer({ min: 0, max: 7 }) }).map(({ first, size }): LineSpan => ({ first, last: first + size }));
    const lines = (list: readonly LineSpan[]) => {
      const set = new Set<number>();
      for (const s of list) for (let l = s.first; l <= s.last; l++) set.add(l);
      return [...set].sort((a, b) => a - b);
    };
    fc.assert(
      fc.property(fc.array(span, { maxLength: 11, size: 'max' }), (spans) => {
        const merged = mergeSpans(spans);
        expect(lines(merged)).toEqual(lines(spans));
        for (let k = 1; k < merged.length; k++) expect(merged[k]!.first).toBeGreaterThan(merged[k - 1]!.last + 1);
      }),
      propertyParameters(500),
    );
  });

  it('leaves its input alone', () => {
    const spans = [{ first: 3, last: 4 }, { first: 1, last: 2 }];
    expect(mergeSpans(spans)).toEqual([{ first: 1, last: 4 }]);
    expect(spans).toEqual([{ first: 3, last: 4 }, { first: 1, last: 2 }]);
  });
});
