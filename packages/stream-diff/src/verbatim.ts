import * as costs from './costs';

const { LF } = costs;

/** A verbatim comparison of pending new text (from index 0) with the original from `base`. */
export interface Run {
  /** Code points of new text that match. */
  k: number;
  /** Original offset (code units) just past the match. */
  off: number;
  /** Matched code points up to and including the last LF among them (0: none). */
  lineK: number;
  /** Original offset just past that LF. */
  lineOff: number;
  /** A mismatch or the end of the original was hit: appending new text cannot extend the run. */
  stopped: boolean;
}

export const startRun = (base: number): Run => ({ k: 0, off: base, lineK: 0, lineOff: base, stopped: false });

/** Extends `run` over newly appended text; returns the code points compared. */
export function extendRun(original: string, p: readonly number[], run: Run): number {
  let compared = 0;
  while (!run.stopped && run.k < p.length) {
    const cp = run.off < original.length ? original.codePointAt(run.off)! : -1;
    compared++;
    if (cp !== p[run.k]) {
      run.stopped = true;
      break;
    }
    run.k++;
    run.off += cp > 0xffff ? 2 : 1;
    if (cp === LF) {
      run.lineK = run.k;
      run.lineOff = run.off;
    }
  }
  return compared;
}

/** The run left once its first `run.lineK` code points are committed. */
export const afterLines = (run: Run): Run => ({ ...run, k: run.k - run.lineK, lineK: 0 });

export interface RepeatRule {
  readonly lines: number;
  readonly solid: number;
  readonly reach: number;
}

/**
 * Looks for the line `p[a..e)` at a line start of `original` within `rule.reach` code units
 * after `from`, such that the pending text from `a` repeats the original there for at least
 * `rule.lines` line breaks and `rule.solid` code points above U+0020, or to its end with that
 * many code points above U+0020, 8 of them past a line break, no further from `from` than 4
 * times its length. Tries at most 8 places.
 * Returns the offset or -1, and an upper bound of the code units scanned or compared.
 */
export function findRepeat(
  original: string,
  p: readonly number[],
  a: number,
  e: number,
  from: number,
  rule: RepeatRule,
): { at: number; work: number } {
  const line = String.fromCodePoint(...p.slice(a, e));
  // Searching a bounded slice keeps a miss from scanning the rest of a large original.
  const zone = original.slice(from, from + rule.reach + line.length);
  let work = zone.length;
  for (let i = zone.indexOf(line), tries = 0; i >= 0 && tries < 8; i = zone.indexOf(line, i + 1), tries++) {
    const q = from + i;
    if (q > 0 && original.charCodeAt(q - 1) !== LF) continue;
    let lines = 0;
    let solid = 0;
    let next = 0;
    let k = a;
    for (let off = q; k < p.length && off < original.length; k++) {
      const cp = original.codePointAt(off)!;
      work++;
      if (cp !== p[k]) break;
      off += cp > 0xffff ? 2 : 1;
      if (cp === LF) lines++;
      else if (cp > 32) {
        solid++;
        if (lines > 0) next++;
      }
      if (lines >= rule.lines && solid >= rule.solid) return { at: q, work };
    }
    // Lines longer than the pending text holds: all of it repeating, into a second line, counts
    // too — for a jump of at most 4 times what repeats (a block moved up fills it as well).
    if (k === p.length && solid >= rule.solid && next >= 8 && q - from <= 6 * (k - a)) return { at: q, work };
  }
  return { at: -1, work };
}

/** Where the original's line that ends just before `offset` (a line start) begins; -1 if none. */
export function lineBefore(original: string, offset: number): number {
  if (offset === 0 || original.charCodeAt(offset - 1) !== LF) return -1;
  return offset < 2 ? 0 : original.lastIndexOf('\n', offset - 2) + 1;
}

/** Whether the pending code points `p[a..e)` are the original's code units `[from, to)` verbatim. */
export function repeatsLine(original: string, p: readonly number[], a: number, e: number, from: number, to: number): boolean {
  let off = from;
  for (let k = a; k < e; k++) {
    const cp = off < to ? original.codePointAt(off)! : -1;
    if (cp !== p[k]) return false;
    off += cp > 0xffff ? 2 : 1;
  }
  return off === to;
}
