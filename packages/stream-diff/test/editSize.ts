// Sizes of an edit, for the guarantees of SPEC.md [D19]–[D21] and the corpus report: what ops
// cost, what the cheapest character diff and the cheapest line diff of the same texts cost.
import type { DiffOp } from '../src/ops';

/** Code units the ops delete plus code units they insert: the size of the edit a reviewer reads. */
export function opsCost(ops: readonly DiffOp[]): number {
  let cost = 0;
  for (const op of ops) cost += op.type === 'insert' ? op.text.length : op.type === 'delete' ? op.length : 0;
  return cost;
}

/** The smallest deleted + inserted code units that turn `a` into `b` (a longest common subsequence). */
export function charOptimum(a: string, b: string): number {
  let prev = new Uint32Array(b.length + 1);
  let cur = new Uint32Array(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    const c = a.charCodeAt(i - 1);
    for (let j = 1; j <= b.length; j++) {
      cur[j] = c === b.charCodeAt(j - 1) ? prev[j - 1]! + 1 : Math.max(prev[j]!, cur[j - 1]!);
    }
    [prev, cur] = [cur, prev];
  }
  return a.length + b.length - 2 * prev[b.length]!;
}

/** `text` cut after each LF; a last line without one is a line too. */
export function splitLines(text: string): string[] {
  const out: string[] = [];
  for (let at = 0; at < text.length; ) {
    const end = text.indexOf('\n', at);
    const next = end < 0 ? text.length : end + 1;
    out.push(text.slice(at, next));
    at = next;
  }
  return out;
}

/**
 * The cost of the cheapest whole-line diff of `a` into `b`: every line either kept whole or
 * deleted whole and the new one inserted whole, keeping the lines whose lengths sum highest.
 */
export function lineDiffCost(a: string, b: string): number {
  const [x, y] = [splitLines(a), splitLines(b)];
  let prev = new Float64Array(y.length + 1);
  let cur = new Float64Array(y.length + 1);
  for (let i = 1; i <= x.length; i++) {
    for (let j = 1; j <= y.length; j++) {
      const kept = x[i - 1] === y[j - 1] ? prev[j - 1]! + x[i - 1]!.length : 0;
      cur[j] = Math.max(kept, prev[j]!, cur[j - 1]!);
    }
    [prev, cur] = [cur, prev];
  }
  return a.length + b.length - 2 * prev[y.length]!;
}

/** A stretch of ops between two line starts ([D22]): the original and new text it spans, and what it costs. */
export interface LineRegion {
  readonly original: string;
  readonly text: string;
  readonly cost: number;
}

/**
 * Cuts `ops` at every point where the cursor stands at a line start (or the end) of `original`
 * and the text written so far is empty, ends with a line break, or is all of it ([D22]).
 */
export function lineRegions(original: string, ops: readonly DiffOp[]): LineRegion[] {
  const regions: LineRegion[] = [];
  const total = ops.reduce((n, op) => n + (op.type === 'insert' ? op.text.length : op.type === 'keep' ? op.length : 0), 0);
  let [from, cursor, text, cost, written] = [0, 0, '', 0, 0];
  let last = 10; // the last code unit written; a line break before anything is written
  const cut = (): void => {
    const lineStart = cursor === 0 || cursor === original.length || original.charCodeAt(cursor - 1) === 10;
    const lineEnd = last === 10 || written === total;
    if (!lineStart || !lineEnd || (cursor === from && text === '')) return;
    regions.push({ original: original.slice(from, cursor), text, cost });
    [from, text, cost] = [cursor, '', 0];
  };
  for (const op of ops) {
    // Unit by unit: a region may end inside an op (a keep or insert of several lines).
    const units = op.type === 'insert' ? op.text.length : op.length;
    for (let k = 0; k < units; k++) {
      if (op.type === 'insert') {
        [text, last, cost, written] = [text + op.text[k]!, op.text.charCodeAt(k), cost + 1, written + 1];
      } else if (op.type === 'keep') {
        [text, last, written] = [text + original[cursor]!, original.charCodeAt(cursor), written + 1];
        cursor++;
      } else {
        cursor++;
        cost++;
      }
      cut();
    }
  }
  if (cursor > from || text !== '') regions.push({ original: original.slice(from, cursor), text, cost });
  return regions;
}
