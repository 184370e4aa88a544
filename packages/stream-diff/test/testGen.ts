// Seeded generators shared by the tests: code-like originals, edits a model might make, and
// chunkings. Deterministic for a given PRNG so that a failing seed reproduces exactly.
import { StreamingDiff, applyOps, type DiffOp, type StreamingDiffOptions } from '../src/streamDiff';

export type Rng = () => number;

/** mulberry32: tiny, fast, and good enough to drive property tests. */
export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const int = (rng: Rng, lo: number, hi: number): number => lo + Math.floor(rng() * (hi - lo + 1));
const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[int(rng, 0, xs.length - 1)]!;

const TOKENS = ['const', 'let', 'return', 'if (', ')', '{', '}', 'x', 'y', 'value', 'items.map(', '=>', '=', '+',
  '===', '0', '1', '42', "'a'", 'await', 'fetch(url)', ';', ',', 'this.state', '// note', '😀', 'ß', 'é'];

export function codeLine(rng: Rng): string {
  const words = Array.from({ length: int(rng, 0, 7) }, () => pick(rng, TOKENS));
  return '  '.repeat(int(rng, 0, 3)) + words.join(' ');
}

export function codeText(rng: Rng, maxLines: number): string {
  const lines = Array.from({ length: int(rng, 0, maxLines) }, () => codeLine(rng));
  const eol = rng() < 0.1 ? '\r\n' : '\n';
  return lines.join(eol) + (rng() < 0.8 && lines.length > 0 ? eol : '');
}

/** Applies 0–5 edits of the kinds a rewriting model makes, line-wise and character-wise. */
export function mutate(rng: Rng, text: string): string {
  let out = text;
  for (let edits = int(rng, 0, 5); edits > 0; edits--) {
    const lines = out.split('\n');
    const at = int(rng, 0, lines.length);
    switch (int(rng, 0, 6)) {
      case 0: lines.splice(at, 0, ...Array.from({ length: int(rng, 1, 6) }, () => codeLine(rng))); break;
      case 1: lines.splice(at, int(rng, 1, 8)); break;
      case 2: lines.splice(at, 1, codeLine(rng)); break;
      case 3: lines.splice(at, 0, ...lines.slice(int(rng, 0, lines.length), int(rng, 0, lines.length))); break;
      default: {
        const joined = lines.join('\n');
        const s = int(rng, 0, joined.length);
        const e = Math.min(joined.length, s + int(rng, 0, 12));
        const ins = rng() < 0.5 ? '' : pick(rng, TOKENS) + (rng() < 0.3 ? '\n' : '');
        out = joined.slice(0, s) + ins + joined.slice(e);
        continue;
      }
    }
    out = lines.join('\n');
  }
  return out;
}

/** Splits `text` into chunks, sometimes one code unit at a time (splitting surrogate pairs). */
export function chunk(rng: Rng, text: string): string[] {
  const mode = int(rng, 0, 4);
  if (mode === 0) return [text];
  const max = [1, 1, 8, 40, 400][mode]!;
  const out: string[] = [];
  for (let i = 0; i < text.length; ) {
    const n = int(rng, mode === 1 ? 1 : 0, max);
    out.push(text.slice(i, i + n));
    i += n;
  }
  return out;
}

/** Whether offset `at` of `s` falls between the two halves of a surrogate pair. */
const splitsPair = (s: string, at: number): boolean =>
  /[\uD800-\uDBFF]/.test(s.charAt(at - 1)) && /[\uDC00-\uDFFF]/.test(s.charAt(at));

export interface Streamed {
  /** Ops of each call: one entry per push, then finish's. */
  readonly calls: DiffOp[][];
  readonly all: DiffOp[];
  /** Cells computed by each push, and its chunk length in code points. */
  readonly pushCost: { cells: number; codePoints: number }[];
  readonly diff: StreamingDiff;
}

/**
 * Streams `chunks` through a StreamingDiff and checks, after every call, the invariants any
 * chunking must keep; `fail` receives a description of the first broken one.
 */
export function stream(original: string, chunks: readonly string[], options: StreamingDiffOptions = {}, fail: (why: string) => never): Streamed {
  const diff = new StreamingDiff(original, options);
  const calls: DiffOp[][] = [];
  const all: DiffOp[] = [];
  const pushCost: Streamed['pushCost'] = [];
  let received = '';
  let committed = '';
  let cursor = 0;
  const check = (ops: DiffOp[], final: boolean): void => {
    ops.forEach((op, i) => {
      if (i > 0 && ops[i - 1]!.type === op.type) fail(`[D4] adjacent ${op.type} ops in one call`);
      if (op.type === 'insert') {
        if (op.text.length === 0) fail('[D4] empty insert');
        committed += op.text;
        return;
      }
      if (!Number.isInteger(op.length) || op.length < 1) fail(`[D4] ${op.type} of length ${op.length}`);
      if (op.type === 'delete' && !final && received.length <= committed.length) {
        fail('[D7] delete committed before the new text moved past it');
      }
      if (op.type === 'keep') committed += original.slice(cursor, cursor + op.length);
      cursor += op.length;
      if (cursor > original.length) fail('[D1] op runs past the original');
      if (splitsPair(original, cursor)) fail('[D4] op splits a surrogate pair');
    });
    if (!received.startsWith(committed)) fail('[D3] committed text is not a prefix of the received text');
    if (splitsPair(received, committed.length)) fail('[D4] committed text splits a surrogate pair');
    const pending = [...received.slice(committed.length)].length;
    if (!final && pending > (options.maxPending ?? 512) + 1) fail(`[D9] ${pending} code points left pending`);
    calls.push(ops);
    all.push(...ops);
  };
  for (const c of chunks) {
    const before = diff.stats.cells;
    received += c;
    check(diff.push(c), false);
    pushCost.push({ cells: diff.stats.cells - before, codePoints: [...c].length });
  }
  check(diff.finish(), true);
  if (committed !== received) fail('[D2] applying every op does not give the final text');
  if (applyOps(original, all) !== received) fail('[D1] applyOps disagrees with the ops walk');
  return { calls, all, pushCost, diff };
}

export const count = (ops: readonly DiffOp[], type: DiffOp['type']): number =>
  ops.reduce((n, op) => n + (op.type !== type ? 0 : op.type === 'insert' ? op.text.length : op.length), 0);

const NAMES = 'amber basil cedar delta ember fjord gable heron inlet juniper kestrel lagoon marsh nectar orchid pewter quartz raven sable thistle umber violet willow xenon yarrow zephyr acorn birch clover dune'.split(' ');

/** Line `i` of code whose lines share only their indentation, `const` and punctuation. */
export const distinctLine = (i: number): string =>
  `  const ${NAMES[i % 30]}${i} = ${NAMES[(i * 7 + 3) % 30]}.${NAMES[(i * 11 + 5) % 30]}(${i * 37});\n`;
