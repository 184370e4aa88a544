import { propertyConfig, seededRandom } from '@flint/test-kit';
import { describe, expect, it } from 'vitest';
import { CodeFenceFilter } from './CodeFenceFilter';

const { seed, iterations } = propertyConfig(200);

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

/** Splits `text` into 1–6 character chunks at random, as tokens arrive. */
function chunksOf(random: () => number, text: string): string[] {
  const chunks: string[] = [];
  for (let i = 0; i < text.length; ) {
    const length = 1 + Math.floor(random() * 6);
    chunks.push(text.slice(i, i + length));
    i += length;
  }
  return chunks;
}

describe('CodeFenceFilter', () => {
  it(`gives the same code however the answer is split into tokens (seed ${seed})`, () => {
    const random = seededRandom(seed);
    for (let i = 0; i < iterations; i++) {
      const [answer, code] = answers[i % answers.length]!;
      const filter = new CodeFenceFilter();
      const out = chunksOf(random, answer).map((chunk) => filter.push(chunk)).join('') + filter.finish();
      expect(out, JSON.stringify(answer)).toBe(code);
    }
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
