// [D10] The jump past a deleted block longer than the lookahead: found by the verbatim repeat of
// the pending lines further on in the original, past the window too.
import { LF } from './costs';
import { INSERT_LINE, PAIR_LINE, type LineStep, type NewLine } from './lines';
import { findRepeat, lineBefore, repeatsLine, type RepeatRule } from './verbatim';

/** Evidence for a jump; never more than half of what pending text can hold. */
export const resyncRule = (maxPending: number): RepeatRule => ({ lines: maxPending >= 256 ? 4 : 2, solid: Math.min(160, maxPending >> 1), reach: 1 << 16 });

export interface Jump {
  /** The steps before this index are committed first. */
  readonly start: number;
  /** Then the original up to this offset (a line start) is deleted. */
  readonly target: number;
}

export interface JumpSearch {
  readonly original: string;
  /** Pending new text, as code points. */
  readonly pending: readonly number[];
  readonly news: readonly NewLine[];
  /** A line diff of the pending lines, and the range of its steps about to be forced out. */
  readonly steps: readonly LineStep[];
  readonly from: number;
  readonly to: number;
  /** Where in the original the steps before step x have reached. */
  readonly offsetAt: (x: number) => number;
  /** Where the committed ops reach. */
  readonly cursor: number;
  readonly rule: RepeatRule;
}

/**
 * Before the forced steps `[from, to)` insert or pair a line, looks for that line further on in
 * the original where the pending text from it repeats the original for the evidence `rule` asks
 * — unless the text after the repeat resumes the original where the steps stand instead (the
 * lines were moved up, not a block deleted). Earlier forced lines that repeat the original lines
 * just before the repeat are taken back into it. At most 3 lines are tried.
 */
export function findJump(search: JumpSearch): { jump: Jump | null; work: number } {
  const { original, pending: p, news, steps, from, to, offsetAt } = search;
  let work = 0;
  for (let x = from, tries = 0; x < to && tries < 3; x++) {
    const step = steps[x]!;
    if (step.type !== INSERT_LINE && step.type !== PAIR_LINE) continue;
    const line = news[step.i]!;
    tries++;
    const at = offsetAt(x);
    const found = findRepeat(original, p, line.from, line.to, at, search.rule);
    work += found.work;
    if (found.at < 0) continue;
    const moved = resumes(original, p, line.from, found.at, [at, search.cursor]);
    work += moved.work;
    if (moved.resumes) continue;
    let [start, target] = [x, found.at];
    for (let y = x - 1; y >= from; y--) {
      const prev = steps[y]!;
      const back = lineBefore(original, target);
      if (prev.i < 0 || back < 0 || offsetAt(y) > back) break;
      const l = news[prev.i]!;
      work += l.to - l.from;
      if (!repeatsLine(original, p, l.from, l.to, back, target)) break;
      [start, target] = [y, back];
    }
    return { jump: { start, target }, work };
  }
  return { jump: null, work };
}

/**
 * Whether the pending text from `from`, which repeats the original at `at`, stops repeating it
 * on a line that the original holds at one of `cursors` instead: a move of the repeated lines.
 */
function resumes(original: string, p: readonly number[], from: number, at: number, cursors: readonly number[]): { resumes: boolean; work: number } {
  let k = from;
  for (let off = at; k < p.length && off < original.length; k++) {
    const cp = original.codePointAt(off)!;
    if (cp !== p[k]) break;
    off += cp > 0xffff ? 2 : 1;
  }
  if (k === p.length) return { resumes: false, work: k - from };
  let lineFrom = k;
  while (lineFrom > from && p[lineFrom - 1] !== LF) lineFrom--;
  let lineTo = p.indexOf(LF, k);
  lineTo = lineTo < 0 ? p.length : lineTo + 1;
  const text = String.fromCodePoint(...p.slice(lineFrom, lineTo));
  return { resumes: cursors.some((cursor) => original.startsWith(text, cursor)), work: k - from + lineTo - lineFrom };
}
