// What the line tier remembers across decisions ([D20]): original lines whose content was already
// written elsewhere, the lines just replaced, and how alike pending and original lines are.
import { lcsLength, solidOf, type NewLine, type OriginalLine } from './lines';

const indentOf = (text: string): number => text.length - text.trimStart().length;

/** A line with fewer code points above U+0020 says too little to be matched on its own. */
export const SOLID_LINE = 8;

const NEVER = Number.MAX_SAFE_INTEGER;

export class LineLedger {
  /** Code units of the lines compared for likeness, times words: work outside the alignments. */
  compared = 0;
  /**
   * Original lines a committed insert repeats (by text): a line moved up leaves its old copy to
   * delete, so an alignment that leaves the copy behind pays for it.
   */
  private readonly spent = new Map<string, number>();
  /**
   * The last original lines deleted or paired away: one of them written again is a line moved
   * down past its neighbours — inserted, not paired with the next similar line in turn.
   */
  private readonly replaced: string[] = [];
  /** Common code units of a pending line (by id) and original lines (by index). */
  private readonly common = new Map<number, Map<number, number>>();

  constructor(private readonly remember: number) {}

  /**
   * What pairing `line` with the original line `old` (line `index` of the original) costs: the
   * code units its cheapest character edit inserts and deletes, if more than half of the longer
   * line is common — a changed line, not a different one. A line the window holds verbatim, or
   * that was just replaced, is kept or inserted, never paired: a run of similar lines shifted
   * by one reads as that one line moved, not as every line changed. `windowTexts`: the texts of
   * the window's lines.
   */
  pairCost(line: NewLine, old: OriginalLine, index: number, windowTexts: ReadonlySet<string>): number {
    if (windowTexts.has(line.text) || this.replaced.includes(line.text)) return NEVER;
    let known = this.common.get(line.id);
    if (!known) this.common.set(line.id, (known = new Map()));
    let common = known.get(index);
    if (common === undefined) known.set(index, (common = this.likeness(line.text, old.text)));
    if (common < 0) return NEVER;
    return line.units + old.text.length - 2 * common;
  }

  /**
   * Whether `text` is alike enough to the original line `old` to be its pair; `start`: `text` is
   * the start of a line, compared with as much of `old`.
   */
  alike(text: string, old: string, start = false): boolean {
    return !this.spent.has(old) && this.likeness(text, start ? old.slice(0, text.length + SOLID_LINE) : old) >= 0;
  }

  /**
   * Code units two lines have in common (a common subsequence of their indentations, then of the
   * rest), or -1 when the rest has no more than half of the longer one in common: indentation
   * alone does not make two lines one changed line.
   */
  private likeness(a: string, b: string): number {
    const [ia, ib] = [indentOf(a), indentOf(b)];
    const rest = this.lcs(a.slice(ia), b.slice(ib));
    if (2 * rest <= Math.max(a.length - ia, b.length - ib)) return -1;
    return rest + (ia > 0 && ib > 0 ? this.lcs(a.slice(0, ia), b.slice(0, ib)) : 0);
  }

  /** A whole line was inserted: the window line it repeats is spent. */
  inserted(text: string, window: readonly OriginalLine[]): void {
    if (solidOf(text) >= SOLID_LINE && window.some((w) => w.text === text)) this.spend(text);
  }

  /**
   * A line too long to pair before it was written out was inserted ([D9]): the window line it
   * repeats, or else the first it is alike to, is spent.
   */
  insertedLong(text: string, window: readonly OriginalLine[]): void {
    if (window.some((w) => w.text === text)) return this.spend(text);
    if (solidOf(text) < SOLID_LINE) return;
    const old = window.find((w) => this.alike(text, w.text));
    if (old) this.spend(old.text);
  }

  /** An original line was consumed — kept, or `replaced` (deleted or paired). */
  consumed(text: string, replaced: boolean): void {
    if (replaced) {
      this.replaced.push(text);
      if (this.replaced.length > this.remember) this.replaced.shift();
    }
    const left = this.spent.get(text);
    if (left === undefined) return;
    if (left > 1) this.spent.set(text, left - 1);
    else this.spent.delete(text);
  }

  /** For each window column, the code units of spent lines at or past it: what ending there leaves to delete. */
  spentPast(window: readonly OriginalLine[]): (j: number) => number {
    const past = new Array<number>(window.length + 1).fill(0);
    for (let j = window.length - 1; j >= 0; j--) past[j] = past[j + 1]! + (this.spent.has(window[j]!.text) ? window[j]!.text.length : 0);
    return (j) => past[j]!;
  }

  /** The pending line `id` was committed: its likeness figures are no longer needed. */
  forget(id: number): void {
    this.common.delete(id);
  }

  private spend(text: string): void {
    this.spent.set(text, (this.spent.get(text) ?? 0) + 1);
  }

  private lcs(a: string, b: string): number {
    const found = lcsLength(a, b);
    this.compared += found.work;
    return found.length;
  }
}
