/** Where a suggestion ends (CompletionCutter, while streaming) and how it is trimmed (postProcess). */
import { propertyParameters } from '@flint/test-kit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildCompletionContext } from './completionPrompt';
import { CompletionCutter } from './CompletionCutter';
import { postProcess } from './postProcess';

function shapeAt(source: string) {
  const cursor = source.indexOf('|');
  const text = source.slice(0, cursor) + source.slice(cursor + 1);
  return buildCompletionContext({ path: 'a.ts', text, cursor, openFiles: [], promptTokens: 2048, maxLines: 16 }).shape;
}

/** Streams `output` in `chunks` through a cutter; what was released and the final suggestion. */
function complete(source: string, output: string, sizes: number[] = [output.length]) {
  const shape = shapeAt(source);
  const cutter = new CompletionCutter(shape);
  let released = '';
  let at = 0;
  for (let i = 0; at < output.length && !cutter.done; i++) {
    const size = sizes[i % sizes.length]!;
    released += cutter.push(output.slice(at, at + size));
    at += size;
  }
  released += cutter.finish();
  return { released, stoppedEarly: at < output.length, suggestion: postProcess(cutter.text, shape) };
}

describe('where a suggestion ends', () => {
  it('mid-line: at the end of the line, and the provider can stop right there', () => {
    const result = complete('const t = |;\n', 'a + b;\nconsole.log(t);\n', [3]);
    expect(result.released).toBe('a + b;');
    expect(result.stoppedEarly).toBe(true);
  });

  it('after a block opener: the block, up to a blank line', () => {
    expect(complete('function f() {|\n', '\n  return 1;\n}\n\nfunction g() {}\n').released).toBe('\n  return 1;\n}');
  });

  it('on an indented line: up to a dedent past that indent', () => {
    expect(complete('if (x) {\n    |\n  }\n', 'return 1;\n  }\n').suggestion).toBe('return 1;');
  });

  it('before a line that repeats the next line of the file', () => {
    expect(complete('const a = 1;|\nconst b = 2;\n', '\nconst c = 3;\nconst b = 2;\n').suggestion).toBe('\nconst c = 3;');
  });

  it('inside an auto-closed block, leaves the closer its own line', () => {
    expect(complete('function f() {|}\n', '\n  return 1;\n}').suggestion).toBe('\n  return 1;\n');
  });

  it('holds back a line until it is judged, streams the first line as it comes', () => {
    const cutter = new CompletionCutter(shapeAt('function f() {|\n'));
    expect(cutter.push('retu')).toBe('retu');
    expect(cutter.push('rn;\n  x')).toBe('rn;');
    expect(cutter.push('();\n')).toBe('\n  x();');
    expect(cutter.finish()).toBe('');
  });

  it('at most maxLines lines', () => {
    const lines = Array.from({ length: 30 }, (_, i) => `  call${i}();`).join('\n');
    expect(complete('function f() {|\n', `\n${lines}`).suggestion.split('\n')).toHaveLength(16);
  });

  const samples: Array<[string, string]> = [
    ['const t = |;\n', 'a + b;\nmore'],
    ['function f() {|\n', '\n  return 1;\n}\n\nfunction g() {}\n'],
    ['if (x) {\n    |\n  }\n', 'return 1;\n  }\n'],
    ['function f() {|}\n', '\n  return 1;\n}'],
    ['const s = sum(|);\n', 'a, b);'],
    ['const a = 1;|\nconst b = 2;\n', '\nconst c = 3;\nconst b = 2;\n'],
    ['log("|")\n', 'hello")'],
  ];
  it('any chunking releases the same text, and the suggestion is a prefix of it [P26]', () => {
    // Up to eight chunk sizes of 1–6 characters, used in turn.
    const sizes = fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 8, size: 'max' });
    fc.assert(
      fc.property(fc.constantFrom(...samples), sizes, ([source, output], sizes) => {
        const whole = complete(source, output);
        const chunked = complete(source, output, sizes);
        expect(chunked.released).toBe(whole.released);
        expect(chunked.suggestion).toBe(whole.suggestion);
        expect(chunked.released.startsWith(chunked.suggestion), `${JSON.stringify(chunked.suggestion)} is not a prefix of ${JSON.stringify(chunked.released)}`).toBe(true);
      }),
      propertyParameters(300),
    );
  });
});

describe('post-processing', () => {
  const cases: Array<[string, string, string, string]> = [
    ['does not repeat a closer the line already has', 'const s = sum(|);\n', 'a, b);', 'a, b'],
    ['closes a string only once', 'log("|")\n', 'hello")', 'hello'],
    ['keeps brackets it opened itself', 'f(|)\n', 'g(x))', 'g(x)'],
    ['keeps a balanced call', 'f(|)\n', 'g()', 'g()'],
    ['keeps a closer the suffix does not have', 'foo(a, |\n', 'b)', 'b)'],
    ['drops a tail that repeats the rest of the line', 'return a |b;\n', '+ b', '+ '],
    ['does not cut inside an identifier', 'if (items.|h > 0)\n', 'length', 'length'],
    ['drops a block closer the next line already has', 'function f() {|\n}\n', '\n  return 1;\n}', '\n  return 1;'],
    ['keeps a closer of an inner block the file lacks', '  if (x) {|\n}\n', '\n    y();\n  }', '\n    y();\n  }'],
    ['trims trailing whitespace at the end of a line', 'let x = |\n', '42;  ', '42;'],
    ['drops whitespace-only suggestions', 'let x = |\n', '   ', ''],
    ['drops a suggestion that only repeats the suffix', 'const s = sum(a|);\n', ');', ''],
  ];
  it.each(cases)('%s', (_name, source, output, expected) => {
    expect(postProcess(output, shapeAt(source))).toBe(expected);
  });
});
