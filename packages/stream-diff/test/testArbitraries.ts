// fast-check arbitraries for the property tests: code-like originals, the edits a rewriting model
// makes, chunkings of its stream and options. Each is plain data that shrinks (fewer lines, fewer
// edits, bigger chunks, default options), so a failure is reported as a small case. Arrays take
// `size: 'max'` so that their lengths spread over the whole range, as the cases this suite was
// tuned on did; fast-check's default size keeps them to a handful.
import fc from 'fast-check';
import type { StreamingDiffOptions } from '../src/streamDiff';

const TOKENS = ['const', 'let', 'return', 'if (', ')', '{', '}', 'x', 'y', 'value', 'items.map(', '=>', '=', '+',
  '===', '0', '1', '42', "'a'", 'await', 'fetch(url)', ';', ',', 'this.state', '// note', '😀', 'ß', 'é'];

/** `true` with probability `p`; shrinks to `false`. */
export const chance = (p: number): fc.Arbitrary<boolean> =>
  fc.oneof({ arbitrary: fc.constant(false), weight: Math.round((1 - p) * 100) }, { arbitrary: fc.constant(true), weight: Math.round(p * 100) });

/** An indented line of 0–7 tokens. */
export const codeLine: fc.Arbitrary<string> = fc
  .tuple(fc.integer({ min: 0, max: 3 }), fc.array(fc.constantFrom(...TOKENS), { maxLength: 7, size: 'max' }))
  .map(([indent, words]) => '  '.repeat(indent) + words.join(' '));

/** Up to `maxLines` lines, LF or (one in ten) CRLF, usually ending with a line break. */
export const codeText = (maxLines: number): fc.Arbitrary<string> =>
  fc
    .record({ lines: fc.array(codeLine, { maxLength: maxLines, size: 'max' }), crlf: chance(0.1), finalBreak: chance(0.8) })
    .map(({ lines, crlf, finalBreak }) => {
      const eol = crlf ? '\r\n' : '\n';
      return lines.join(eol) + (finalBreak && lines.length > 0 ? eol : '');
    });

/**
 * One edit of the kinds a rewriting model makes. Positions are any naturals, taken modulo the
 * text they land in, so an edit list applies to any original.
 */
export type Edit =
  | { kind: 'insert lines'; at: number; lines: string[] }
  | { kind: 'delete lines'; at: number; count: number }
  | { kind: 'replace a line'; at: number; line: string }
  | { kind: 'copy lines'; at: number; from: number; to: number }
  | { kind: 'replace characters'; at: number; length: number; text: string };

const position = fc.nat();

/** Nothing, or a token, sometimes with a line break. */
const typed = fc.oneof(fc.constant(''), fc.tuple(fc.constantFrom(...TOKENS), chance(0.3)).map(([token, eol]) => token + (eol ? '\n' : '')));

// Character edits are three in seven, as each kind of line edit is one in seven.
const edit: fc.Arbitrary<Edit> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('replace characters' as const), at: position, length: fc.integer({ min: 0, max: 12 }), text: typed }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('insert lines' as const), at: position, lines: fc.array(codeLine, { minLength: 1, maxLength: 6, size: 'max' }) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('delete lines' as const), at: position, count: fc.integer({ min: 1, max: 8 }) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('replace a line' as const), at: position, line: codeLine }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('copy lines' as const), at: position, from: position, to: position }), weight: 1 },
);

/** 0–5 edits, line-wise and character-wise, applied in order. */
export const edits: fc.Arbitrary<Edit[]> = fc.array(edit, { maxLength: 5, size: 'max' });

export function applyEdits(text: string, list: readonly Edit[]): string {
  let out = text;
  for (const e of list) {
    if (e.kind === 'replace characters') {
      const at = e.at % (out.length + 1);
      out = out.slice(0, at) + e.text + out.slice(Math.min(out.length, at + e.length));
      continue;
    }
    const lines = out.split('\n');
    const at = e.at % (lines.length + 1);
    if (e.kind === 'insert lines') lines.splice(at, 0, ...e.lines);
    else if (e.kind === 'delete lines') lines.splice(at, e.count);
    else if (e.kind === 'replace a line') lines.splice(at, 1, e.line);
    else lines.splice(at, 0, ...lines.slice(e.from % (lines.length + 1), e.to % (lines.length + 1)));
    out = lines.join('\n');
  }
  return out;
}

/** An original and a model's rewrite of it. */
export const rewrite = (maxLines: number): fc.Arbitrary<{ original: string; text: string }> =>
  fc.tuple(codeText(maxLines), edits).map(([original, list]) => ({ original, text: applyEdits(original, list) }));

/**
 * Chunk sizes in code units, used in turn until the text runs out: `[]` is the text in one piece;
 * `[1]` splits every surrogate pair; 0 is an empty push. Shrinks towards one piece.
 */
export const chunking: fc.Arbitrary<number[]> = fc.oneof(
  fc.constant<number[]>([]),
  fc.constant<number[]>([1]),
  ...[8, 40, 400].map((max) => fc.array(fc.integer({ min: 0, max }), { minLength: 1, maxLength: 48, size: 'max' })),
);

/** Cuts `text` with `sizes` (see `chunking`). */
export function chunksOf(text: string, sizes: readonly number[]): string[] {
  if (sizes.length === 0) return [text];
  // Only empty pushes would never end: they are sent, then the text in one piece.
  if (sizes.every((size) => size === 0)) return [...sizes.map(() => ''), text];
  const out: string[] = [];
  for (let at = 0, i = 0; at < text.length; i++) {
    const size = sizes[i % sizes.length]!;
    out.push(text.slice(at, at + size));
    at += size;
  }
  return out;
}

/** Small windows and limits: the window edge, forced commits and resyncs become common. */
export const smallWindow: fc.Arbitrary<StreamingDiffOptions> = fc
  .record({ windowSize: fc.integer({ min: 16, max: 300 }), maxPending: fc.nat(), lookaheadLines: fc.integer({ min: 0, max: 4 }) })
  // maxPending in 8..W/2, the range the options allow ([D15]).
  .map(({ windowSize, maxPending, lookaheadLines }) => ({ windowSize, maxPending: 8 + (maxPending % ((windowSize >> 1) - 7)), lookaheadLines }));
