// Sizes of an edit, for the guarantees of SPEC.md [D19]–[D21] and the corpus report: what ops
// cost, what the cheapest character diff and the cheapest line diff of the same texts cost.
import type { DiffOp } from './ops';

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
