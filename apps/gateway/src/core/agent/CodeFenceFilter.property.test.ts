import { propertyParameters } from '@flint/test-kit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CodeFenceFilter } from './CodeFenceFilter';

/** Answers as a model sends them, and the code each one stands for. */
const answers: Array<[answer: string, code: string]> = [
  ['const a = 1;\nconst b = 2;\n', 'const a = 1;\nconst b = 2;\n'],
  ['```ts\nconst a = 1;\n```', 'const a = 1;'],
  ['```\nconst a = 1;\n```\n', 'const a = 1;'],
  ['const a = 1;\n```', 'const a = 1;'],
  ['\nconst a = 1;\n', '\nconst a = 1;\n'],
  ['\n\n  return x;\n', '\n\n  return x;\n'],
  ['`x` + `y`;\n', '`x` + `y`;\n'],
  ['const s = `\n```\n`;\n', 'const s = `\n```\n`;\n'],
  ['  indented();\n  \n', '  indented();\n  \n'],
  ['', ''],
];

/** Token lengths of 1–6 characters, used in turn until the answer runs out. */
const tokenLengths = fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 16, size: 'max' });

function chunksOf(text: string, lengths: readonly number[]): string[] {
  const chunks: string[] = [];
  for (let at = 0, i = 0; at < text.length; i++) {
    const length = lengths[i % lengths.length]!;
    chunks.push(text.slice(at, at + length));
    at += length;
  }
  return chunks;
}

describe('CodeFenceFilter', () => {
  it('gives the same code however the answer is split into tokens', () => {
    fc.assert(
      fc.property(fc.constantFrom(...answers), tokenLengths, ([answer, code], lengths) => {
        const filter = new CodeFenceFilter();
        const out = chunksOf(answer, lengths).map((chunk) => filter.push(chunk)).join('') + filter.finish();
        expect(out).toBe(code);
      }),
      propertyParameters(200),
    );
  });

  it('lets a leading newline out with its token, and holds a later one while a fence could follow', () => {
    const filter = new CodeFenceFilter();
    expect(filter.push('\n')).toBe('\n');
    expect(filter.push('x;\n')).toBe('x;');
    expect(filter.push('``')).toBe('');
    expect(filter.push('`')).toBe('');
    expect(filter.finish()).toBe('');
  });
});
