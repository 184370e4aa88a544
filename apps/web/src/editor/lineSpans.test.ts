import { propertyConfig, seededRandom } from '@flint/test-kit';
import { describe, expect, it } from 'vitest';
import { mergeSpans, type LineSpan } from './lineSpans';

const { seed, iterations } = propertyConfig(500);

describe('mergeSpans', () => {
  it(`covers exactly the same lines with disjoint, non-adjacent spans in order (SEED=${seed} ITERATIONS=${iterations})`, () => {
    for (let i = 0; i < iterations; i++) {
      const random = seededRandom(seed + i);
      const spans: LineSpan[] = Array.from({ length: Math.floor(random() * 12) }, () => {
        const first = 1 + Math.floor(random() * 60);
        return { first, last: first + Math.floor(random() * 8) };
      });
      const lines = (list: readonly LineSpan[]) => {
        const set = new Set<number>();
        for (const s of list) for (let l = s.first; l <= s.last; l++) set.add(l);
        return [...set].sort((a, b) => a - b);
      };
      const merged = mergeSpans(spans);
      expect(lines(merged), `SEED=${seed + i}`).toEqual(lines(spans));
      for (let k = 1; k < merged.length; k++) expect(merged[k]!.first).toBeGreaterThan(merged[k - 1]!.last + 1);
    }
  });

  it('leaves its input alone', () => {
    const spans = [{ first: 3, last: 4 }, { first: 1, last: 2 }];
    expect(mergeSpans(spans)).toEqual([{ first: 1, last: 4 }]);
    expect(spans).toEqual([{ first: 3, last: 4 }, { first: 1, last: 2 }]);
  });
});
