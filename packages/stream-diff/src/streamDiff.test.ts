import { propertyParameters } from '@flint/test-kit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StreamingDiff, applyOps, type DiffOp, type StreamingDiffOptions } from './index';
import { chunking, chunksOf, codeText, rewrite, smallWindow } from '../test/testArbitraries';
import { chunk, codeLine, count, distinctLine as line, mulberry32, stream } from '../test/testGen';

const runs = propertyParameters(300);

const fail = (why: string): never => {
  throw new Error(why);
};

/** The defaults, or (two times in five) small windows and limits. */
const anyOptions: fc.Arbitrary<StreamingDiffOptions> = fc.oneof({ arbitrary: fc.constant({}), weight: 3 }, { arbitrary: smallWindow, weight: 2 });

const streamAll = (original: string, text: string, chunks = [text], options: StreamingDiffOptions = {}): DiffOp[] =>
  stream(original, chunks, options, fail).all;

/** Pushes `text` in `size`-unit chunks; returns every op (with finish's) and the instance. */
function pushAll(diff: StreamingDiff, text: string, size: number, finish = true): DiffOp[] {
  const ops: DiffOp[] = [];
  for (let i = 0; i < text.length; i += size) ops.push(...diff.push(text.slice(i, i + size)));
  if (finish) ops.push(...diff.finish());
  return ops;
}

describe('StreamingDiff — properties', () => {
  it('[D2][D3][D4][D7][D9][D12] for any chunking the ops rebuild the text, only grow a committed prefix, are well formed, and each push stays within (W + 1) × (3c + 2P) cells', () => {
    fc.assert(
      fc.property(anyOptions, rewrite(40), chunking, (options, { original, text }, sizes) => {
        const [W, P] = [options.windowSize ?? 1024, options.maxPending ?? 512];
        const { pushCost } = stream(original, chunksOf(text, sizes), options, fail);
        for (const { cells, codePoints } of pushCost) {
          if (cells > (W + 1) * (3 * codePoints + 2 * P)) fail(`[D12] ${cells} cells for a ${codePoints}-code-point push`);
        }
      }),
      runs,
    );
  });

  it('[D2] unrelated texts, empty texts and pure appends rebuild exactly too', () => {
    const pairs = fc.tuple(codeText(12), codeText(12), fc.constantFrom('unrelated', 'empty original', 'empty text', 'append'));
    fc.assert(
      fc.property(pairs, chunking, anyOptions, ([a, b, kind], sizes, options) => {
        const [original, text] = ({ unrelated: [a, b], 'empty original': ['', b], 'empty text': [a, ''], append: [a, a + b] } satisfies Record<string, [string, string]>)[kind];
        stream(original, chunksOf(text, sizes), options, fail);
      }),
      runs,
    );
  });

  it('[D8] identical text is only kept, whatever the chunking', () => {
    fc.assert(
      fc.property(codeText(40), chunking, anyOptions, (original, sizes, options) => {
        const { all } = stream(original, chunksOf(original, sizes), options, fail);
        if (all.some((op) => op.type !== 'keep')) fail('[D8] identical text produced an insert or delete');
      }),
      runs,
    );
  });
});

describe('StreamingDiff — rules', () => {
  it('[D1] the documented example, and applyOps on ops so far', () => {
    const original = 'let a = 1;\nlet b = 2;\n';
    const diff = new StreamingDiff(original);
    const first = diff.push('let a = 1;\nlet b');
    const second = diff.push(' = 3;\n');
    const last = diff.finish();
    expect(first).toEqual([{ type: 'keep', length: 11 }]);
    expect(applyOps(original, first)).toBe(original);
    expect(applyOps(original, [...first, ...second, ...last])).toBe('let a = 1;\nlet b = 3;\n');
    expect(applyOps('abc', [{ type: 'insert', text: 'x' }, { type: 'delete', length: 1 }])).toBe('xbc');
    expect(() => applyOps('ab', [{ type: 'keep', length: 3 }])).toThrow(RangeError);
  });

  it('[D4] a surrogate pair split across chunks is never split by ops', () => {
    const original = 'a😀b\n😃c\n';
    const text = 'a😀x\n😃c😀\n';
    for (let cut = 0; cut <= text.length; cut++) {
      const all = streamAll(original, text, [text.slice(0, cut), text.slice(cut)]);
      expect(applyOps(original, all)).toBe(text);
    }
  });

  it('[D4] each call merges neighbours and never returns empty ops', () => {
    const diff = new StreamingDiff('x\n'.repeat(50));
    expect([...diff.push('x\n'.repeat(50)), ...diff.finish()]).toEqual([{ type: 'keep', length: 100 }]);
    expect(new StreamingDiff('abc').push('')).toEqual([]);
  });

  it('[D6][D14] an unfinished line commits nothing; its line break commits it', () => {
    // (An empty original is the [D17] fast path instead: nothing there to align against.)
    const diff = new StreamingDiff('zz\n');
    expect(diff.push('const a')).toEqual([]);
    const ops = diff.push(' = 1;\nconst');
    // The line is committed whole ([D20]); deleting "zz" waits for text past it ([D7]).
    expect(ops).toEqual([{ type: 'insert', text: 'const a = 1;\n' }]);
  });

  it('[D10][D20] a new line waits while the original goes on past the window, until a kept line shows where it resumes', () => {
    const body = Array.from({ length: 20 }, (_, i) => line(i)).join('');
    const original = `zz\n${body}`;
    const diff = new StreamingDiff(original, { windowSize: 128, maxPending: 64 });
    // The new line may be the first of a block the original holds past the window ([D10]).
    expect(diff.push('const a = 1;\n')).toEqual([]);
    const first = diff.push(line(0));
    expect(first).toEqual([{ type: 'insert', text: 'const a = 1;\n' }]);
    const all = [...first, ...diff.push(line(1) + line(2)), ...diff.finish()];
    expect(applyOps(original, all)).toBe(`const a = 1;\n${line(0)}${line(1)}${line(2)}`);
  });

  it('[D7] a deleted line is not deleted while the new text could still match it', () => {
    const original = 'a();\nremoved();\nb();\n';
    const diff = new StreamingDiff(original, { lookaheadLines: 0, windowSize: 64, maxPending: 32 });
    expect(count(diff.push('a();\nremo'), 'delete')).toBe(0);
    expect(count(diff.push('ved();\n'), 'delete')).toBe(0);
    const rest = [...diff.push('b();\n'), ...diff.finish()];
    expect(count(rest, 'delete') + count(rest, 'insert')).toBe(0);
  });

  it('[D9] held-back text never exceeds maxPending code points nor lookaheadLines lines', () => {
    const original = 'a;\n'.repeat(40);
    const diff = new StreamingDiff(original, { windowSize: 64, maxPending: 16, lookaheadLines: 2 });
    let [received, committed, cursor] = ['', '', 0];
    for (let i = 1; i <= 60; i++) {
      const piece = 'ab'.repeat(i % 7) + (i % 3 ? '' : ';\n');
      received += piece;
      for (const op of diff.push(piece)) {
        if (op.type === 'insert') committed += op.text;
        else if (op.type === 'keep') committed += original.slice(cursor, cursor + op.length);
        if (op.type !== 'insert') cursor += op.length;
      }
      const pending = received.slice(committed.length);
      expect(received.startsWith(committed)).toBe(true);
      expect(pending.length).toBeLessThanOrEqual(16);
      expect(pending.split('\n').length - 1).toBeLessThanOrEqual(2);
    }
  });

  it('[D10] a deleted block longer than the window is skipped, not re-inserted', () => {
    const rng = mulberry32(7);
    const lines = (n: number): string => Array.from({ length: n }, (_, i) => `${codeLine(rng)} // ${i}\n`).join('');
    const [head, block, tail] = [lines(10), lines(60), lines(30)];
    const all = streamAll(head + block + tail, head + tail, chunk(rng, head + tail), { windowSize: 256, maxPending: 128 });
    expect(count(all, 'insert')).toBe(0);
    expect(count(all, 'delete')).toBe(block.length);
  });

  it('[D10] with a small P (the gateway uses 96), a rewrite of the top of a function keeps its unchanged bottom', () => {
    const original = Array.from({ length: 30 }, (_, i) => line(i)).join('');
    // 40 new lines in place of the first 10 (358 code points, far past the window and more than
    // inserting P code points would cost to delete), then the other 20 unchanged: P = 96 holds
    // about two of these lines, never the four [D10] asks of a larger P.
    const fresh = Array.from({ length: 40 }, (_, i) => `  let total${i} = await fetchRows(${i}, { limit: ${i * 5} });\n`).join('');
    const tail = Array.from({ length: 20 }, (_, i) => line(i + 10)).join('');
    // At the seam the first line may keep the indentation and keyword it shares with the first
    // deleted line (the alignment sees that before the repeat has its evidence): about that one
    // line is rewritten instead of kept. Before, all 20 lines were (a 30-character keep).
    for (const size of [4, 16, 160]) {
      const ops = pushAll(new StreamingDiff(original, { maxPending: 96 }), fresh + tail, size);
      expect(applyOps(original, ops)).toBe(fresh + tail);
      expect(count(ops, 'keep')).toBeGreaterThanOrEqual(tail.length - 2 * line(10).length);
      expect(count(ops, 'insert')).toBeLessThanOrEqual(fresh.length + 2 * line(10).length);
    }
    // When that line is still pending as the resync finds the next one, it is taken back: with
    // 15 new lines every unchanged line is kept, whatever the chunking (the seam may keep the
    // first deleted line's "  const " in place of the resumed line's own: the same text).
    const shorter = fresh.split('\n').slice(0, 15).join('\n') + '\n';
    for (const size of [4, 16, 160]) {
      const ops = pushAll(new StreamingDiff(original, { maxPending: 96 }), shorter + tail, size);
      expect(applyOps(original, ops)).toBe(shorter + tail);
      expect(count(ops, 'keep')).toBeGreaterThanOrEqual(tail.length - '  const '.length);
      expect(count(ops, 'insert')).toBeLessThanOrEqual(shorter.length + '  const '.length);
    }
  });

  it('[D10][D16] a short verbatim copy of later code is inserted, not taken for a deletion', () => {
    const body = Array.from({ length: 12 }, (_, i) => `  step${i}();\n`).join('');
    const copy = '  step3();\n  step4();\n';
    const all = streamAll(`function a() {\n${body}}\n`, `function a() {\n${copy}${body}}\n`);
    expect(count(all, 'insert')).toBe(copy.length);
    expect(count(all, 'delete')).toBe(0);
  });

  it('[D11][D12] an edit near the start of a 200 KB original returns the same ops for the same work as on 20 KB', () => {
    const lines = Array.from({ length: 6000 }, (_, i) => `  const v${i} = compute(${i % 97}, 'k${i % 13}');\n`);
    const original = lines.join('');
    expect(original.length).toBeGreaterThan(200_000);
    const text = original.replace('compute(3, ', 'computeFast(3, true, ').slice(0, 8000);
    const big = new StreamingDiff(original);
    const small = new StreamingDiff(original.slice(0, 20_000));
    const bigOps = pushAll(big, text, 50, false);
    expect(pushAll(small, text, 50, false)).toEqual(bigOps);
    expect(big.stats).toEqual(small.stats);
    expect(big.stats.cells).toBeLessThan(1025 * 200);
    expect(big.stats.compared).toBeLessThan(3 * text.length);
    expect(count(bigOps, 'insert')).toBe('Fast'.length + ' true,'.length);
  });

  it('[D11][D12] a pure append to a 200 KB original aligns none of the unchanged text', () => {
    const original = Array.from({ length: 7000 }, (_, i) => `  const v${i} = compute(${i % 97});\n`).join('');
    expect(original.length).toBeGreaterThan(200_000);
    const added = 'function added() {\n  return 1;\n}\n';
    const diff = new StreamingDiff(original);
    const ops = pushAll(diff, original + added, 64);
    expect(count(ops, 'keep')).toBe(original.length);
    expect(count(ops, 'insert')).toBe(added.length);
    expect(count(ops, 'delete')).toBe(0);
    expect(diff.stats.cells).toBeLessThan(10 * added.length);
    expect(diff.stats.compared).toBeLessThan(2 * (original.length + added.length));
  });

  it('[D13] finish on empty, identical and fully replaced texts', () => {
    expect(new StreamingDiff('').finish()).toEqual([]);
    expect(new StreamingDiff('old\n').finish()).toEqual([{ type: 'delete', length: 4 }]);
    expect(streamAll('same', 'same')).toEqual([{ type: 'keep', length: 4 }]);
    expect(streamAll('', 'new\n')).toEqual([{ type: 'insert', text: 'new\n' }]);
    const original = 'aaaa;bbbb;cccc;';
    const diff = new StreamingDiff(original);
    const pushed = ['XYZ\n', 'QRS\nTUV', '\n'].flatMap((c) => diff.push(c));
    expect(pushed.every((op) => op.type === 'insert')).toBe(true);
    const last = diff.finish();
    expect(last[last.length - 1]).toEqual({ type: 'delete', length: original.length });
    expect(() => diff.finish()).toThrow();
    expect(() => diff.push('x')).toThrow();
  });

  it('[D13] the last lines that repeat the original\'s last lines are kept, however far past the window', () => {
    const body = Array.from({ length: 40 }, (_, i) => line(i)).join('');
    const original = `function old() {\n${body}}\nexport default old;`;
    const text = 'function fresh() {\n  return 1;\n}\nexport default old;';
    const ops = streamAll(original, text, [text], { windowSize: 64, maxPending: 32 });
    expect(applyOps(original, ops)).toBe(text);
    const last = ops[ops.length - 1]!;
    expect(last.type === 'keep' && last.length >= 'export default old;'.length).toBe(true);
    expect(count(ops, 'insert')).toBeLessThan(text.length - 'export default old;'.length);
  });

  it('[D14] CRLF text is handled like LF text', () => {
    expect(streamAll('a\r\nb\r\nc\r\n', 'a\r\nB\r\nc\r\n')).toEqual([
      { type: 'keep', length: 3 },
      { type: 'insert', text: 'B' },
      { type: 'delete', length: 1 },
      { type: 'keep', length: 5 },
    ]);
  });

  it('[D15] options are validated', () => {
    expect(() => new StreamingDiff('', { windowSize: 8 })).toThrow(RangeError);
    expect(() => new StreamingDiff('', { windowSize: 64, maxPending: 40 })).toThrow(RangeError);
    expect(() => new StreamingDiff('', { lookaheadLines: -1 })).toThrow(RangeError);
  });
});

describe('StreamingDiff — quality [D16]', () => {
  const fn = [
    'function add(a, b) {\n  const sum = a + b;\n  if (sum > 10) {\n    console.log("big");\n  }\n  return sum;\n}\n',
    '\nfunction mul(a, b) {\n  return a * b;\n}\n',
  ].join('');
  /** The ops of streaming `text` in 7-unit chunks, merged across calls and shown as +/-/= strings. */
  const diffOf = (text: string): string[] => {
    const out: string[] = [];
    let cursor = 0;
    for (const op of pushAll(new StreamingDiff(fn), text, 7)) {
      const part = op.type === 'insert' ? op.text : fn.slice(cursor, (cursor += op.length));
      const sign = { keep: '=', insert: '+', delete: '-' }[op.type];
      if (out.length > 0 && out[out.length - 1]![0] === sign) out[out.length - 1] += part;
      else out.push(sign + part);
    }
    return out.filter((s) => s[0] !== '=');
  };

  it('[D16] an inserted line is one insert', () => {
    expect(diffOf(fn.replace('  return sum;\n', '  log(sum);\n  return sum;\n'))).toEqual(['+  log(sum);\n']);
  });

  it('[D16] a deleted block is one delete', () => {
    const block = '  if (sum > 10) {\n    console.log("big");\n  }\n';
    expect(diffOf(fn.replace(block, ''))).toEqual(['-' + block]);
  });

  it('[D16] a changed literal and a renamed identifier stay word-sized', () => {
    expect(diffOf(fn.replace('10', '100'))).toEqual(['+0']);
    expect(diffOf(fn.replaceAll('sum', 'total'))).toEqual(['+total', '-sum', '+total', '-sum', '+total', '-sum']);
  });

  it('[D16] a new function written before a similar one is inserted whole', () => {
    const sub = 'function sub(a, b) {\n  const diff = a - b;\n  return diff;\n}\n\n';
    expect(diffOf(sub + fn)).toEqual(['+' + sub]);
  });
});

describe('past the end of the original', () => {
  it('[D17] commits new text at once when nothing of the original is left', () => {
    const empty = new StreamingDiff('');
    expect(empty.push('const a')).toEqual([{ type: 'insert', text: 'const a' }]);
    expect(empty.push(' = 1;')).toEqual([{ type: 'insert', text: ' = 1;' }]);
    expect(empty.finish()).toEqual([]);
    const kept = new StreamingDiff('x\n');
    const first = kept.push('x\n');
    expect(applyOps('x\n', first)).toBe('x\n');
    expect(kept.push('more')).toEqual([{ type: 'insert', text: 'more' }]);
    expect(applyOps('x\n', [...first, { type: 'insert', text: 'more' }, ...kept.finish()])).toBe('x\nmore');
  });
});

describe('insert runs', () => {
  it('[D18] a long insert run aligns no characters, and still finds the original again', () => {
    const original = Array.from({ length: 40 }, (_, i) => `  const v${i} = items.length * ${i} + weigh(${i});\n`).join('');
    const added = Array.from({ length: 300 }, (_, i) => `  total += tally(rows[${i % 13}], ${i * 7}); // #${i}\n`).join('');
    const options = { maxPending: 96 };
    const measure = (text: string) => {
      const diff = new StreamingDiff(original, options);
      const ops = pushAll(diff, text, 16);
      expect(applyOps(original, ops)).toBe(text);
      return { ops, stats: diff.stats };
    };
    // New code written before the original, which then follows unchanged.
    const { ops, stats } = measure(added + original);
    expect(ops.filter((op) => op.type === 'delete')).toEqual([]);
    expect(ops.filter((op) => op.type === 'keep').reduce((n, op) => n + (op.type === 'keep' ? op.length : 0), 0)).toBe(original.length);
    // An inserted line is decided by the line diff alone: no character cells, and (L + 2) rows of
    // window lines per line, not the (W + 1) columns per code point of a character alignment.
    expect(stats.cells).toBe(0);
    expect(stats.lineCells / 300).toBeLessThan(10 * 40);
  });

  it('[D18] an insert run still finds an original that resumes past a short skipped block', () => {
    const original = Array.from({ length: 30 }, (_, i) => line(i)).join('');
    const added = Array.from({ length: 24 }, (_, i) => `  total += tally(rows[${i % 13}], ${i * 7}); // #${i}\n`).join('');
    // The model writes 24 new lines in place of the original's first 3 (104 characters), then
    // goes on with the rest unchanged: one insert, one delete, the rest kept.
    const skipped = original.split('\n').slice(0, 3).join('\n').length + 1;
    const text = added + original.slice(skipped);
    for (const size of [4, 16, 160]) {
      const ops = pushAll(new StreamingDiff(original, { maxPending: 96 }), text, size);
      expect(applyOps(original, ops)).toBe(text);
      expect(ops.map((op) => op.type).filter((type, i, all) => type !== all[i - 1])).toEqual(['insert', 'delete', 'keep']);
      expect(ops.filter((op) => op.type === 'keep').reduce((n, op) => n + (op.type === 'keep' ? op.length : 0), 0)).toBeGreaterThanOrEqual(original.length - skipped);
    }
  });
});
