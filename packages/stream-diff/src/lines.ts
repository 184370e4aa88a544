// The line tier ([D20]): pending complete lines aligned with the original's lines ahead of the
// cursor, at the prices of a line diff — what a reviewer reads as the size of a hunk.

/** A line of the original: `[start, end)` in code units, `end` just past its LF (or the original's end). */
export interface OriginalLine {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

/** A complete line of pending new text: code points `[from, to)` of the pending text. */
export interface NewLine {
  readonly id: number;
  readonly from: number;
  readonly to: number;
  readonly text: string;
  readonly units: number;
}

/**
 * The original cut into lines, lazily and only as far as asked: a window never reads the original
 * past its end, so the work does not depend on the original's length ([D12]).
 */
export class OriginalLines {
  private readonly starts: number[] = [0];
  private readonly cache = new Map<number, OriginalLine>();
  /** Code units scanned so far (each once). */
  scanned = 0;

  constructor(private readonly original: string) {}

  /** Index of the line that starts at `offset` (a line start), or -1. */
  indexAt(offset: number): number {
    while (this.starts[this.starts.length - 1]! < offset && this.more()) {}
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.starts[mid]! < offset) lo = mid + 1;
      else hi = mid;
    }
    return this.starts[lo] === offset ? lo : -1;
  }

  /** Line `index`, or null past the end of the original. */
  line(index: number): OriginalLine | null {
    while (this.starts.length <= index + 1 && this.more()) {}
    const start = this.starts[index];
    if (start === undefined || start >= this.original.length) return null;
    let found = this.cache.get(index);
    if (!found) {
      const end = this.starts[index + 1] ?? this.original.length;
      const text = this.original.slice(start, end);
      found = { start, end, text };
      this.cache.set(index, found);
    }
    return found;
  }

  /**
   * The whole lines from line `first` whose ends lie within `width` code units of its start — at
   * least the first one, however long.
   */
  window(first: number, width: number): OriginalLine[] {
    const out: OriginalLine[] = [];
    const head = this.line(first);
    if (!head) return out;
    for (let i = first, line: OriginalLine | null = head; line; line = this.line(++i)) {
      if (out.length > 0 && line.end - head.start > width) break;
      out.push(line);
    }
    return out;
  }

  /** Forgets lines before `index` (the cursor only moves forward). */
  drop(index: number): void {
    for (const key of this.cache.keys()) if (key < index) this.cache.delete(key);
  }

  private more(): boolean {
    const from = this.starts[this.starts.length - 1]!;
    if (from >= this.original.length) return false;
    const lf = this.original.indexOf('\n', from);
    const next = lf < 0 ? this.original.length : lf + 1;
    this.scanned += next - from;
    this.starts.push(next);
    return true;
  }
}

export function solidOf(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 32 && (text.charCodeAt(i) & 0xfc00) !== 0xdc00) n++;
  return n;
}

/**
 * Length of the longest common subsequence of two lines, bit-parallel (Hyyrö): the cheapest
 * character edit of one line into the other deletes and inserts everything else. Returns the
 * length and the work (code points of `b` times words of `a`).
 */
export function lcsLength(a: string, b: string): { length: number; work: number } {
  const n = a.length;
  if (n === 0 || b.length === 0) return { length: 0, work: 0 };
  const words = (n + 31) >>> 5;
  const peq = new Map<number, Uint32Array>();
  for (let i = 0; i < n; i++) {
    const c = a.charCodeAt(i);
    let mask = peq.get(c);
    if (!mask) peq.set(c, (mask = new Uint32Array(words)));
    mask[i >>> 5]! |= 1 << (i & 31);
  }
  const v = new Uint32Array(words).fill(0xffffffff);
  for (let k = 0; k < b.length; k++) {
    const mask = peq.get(b.charCodeAt(k));
    if (!mask) continue;
    let carry = 0;
    for (let w = 0; w < words; w++) {
      const vw = v[w]!;
      const u = (vw & mask[w]!) >>> 0;
      const sum = vw + u + carry;
      carry = sum > 0xffffffff ? 1 : 0;
      v[w] = ((sum >>> 0) | (vw & ~mask[w]!)) >>> 0;
    }
  }
  let zeros = 0;
  for (let i = 0; i < n; i++) if ((v[i >>> 5]! & (1 << (i & 31))) === 0) zeros++;
  return { length: zeros, work: b.length * words };
}

export const KEEP_LINE = 0;
export const PAIR_LINE = 1;
export const INSERT_LINE = 2;
export const DELETE_LINE = 3;

/** One step of a line alignment: new line `i` and/or window line `j` (-1: none). */
export interface LineStep {
  readonly type: number;
  readonly i: number;
  readonly j: number;
}

/** Code points above U+0020 an unfinished line needs before it counts as evidence. */
const SOLID_PREFIX = 8;
const OPEN = 0; // the last step was not a delete
const DELETED = 1;
const INF = Number.MAX_SAFE_INTEGER;

/**
 * A line diff of pending lines (rows) against window lines (columns) whose end is free: the
 * original past the end is neither kept nor deleted yet. Keeping an equal line is free; inserting
 * or deleting a line costs its code units; pairing a changed line with an original line costs
 * the code units its cheapest character edit inserts and deletes. Within a changed region the
 * inserts come before the deletes, so equal alternatives are not explored twice.
 */
export class LineAlignment {
  /** For each column, the code units of window lines at or past it that a pending line repeats. */
  private copies: number[] = [];
  private rows = 0;
  private cols = 0;
  private cost = new Float64Array(0);
  private trace = new Uint8Array(0);

  /**
   * `tail`: the unfinished line after the pending lines, a last row that may only be inserted or
   * kept as the start of a window line — evidence for the decisions before it, never committed.
   */
  constructor(
    readonly news: readonly NewLine[],
    readonly olds: readonly OriginalLine[],
    pairCost: (i: number, j: number) => number,
    tail: string | null = null,
  ) {
    // An unfinished line that starts a window line is priced as the first such line, once it
    // says enough to tell lines apart.
    if (tail !== null && solidOf(tail) < SOLID_PREFIX) tail = null;
    const lines = tail === null ? news : [...news, { id: -1, from: 0, to: 0, text: tail, units: tail.length }];
    const tailUnits = tail === null ? 0 : Math.max(tail.length, olds.find((old) => old.text.startsWith(tail!))?.text.length ?? 0);
    // A window line that a pending line repeats, left behind by an alignment that inserted that
    // line instead, is to be deleted later: ends before it pay for it (a line moved, not written).
    const texts = new Set(news.map((line) => line.text));
    this.copies = new Array<number>(olds.length + 1).fill(0);
    for (let k = olds.length - 1; k >= 0; k--) {
      const repeated = texts.has(olds[k]!.text) || (tail !== null && olds[k]!.text.startsWith(tail) && olds[k]!.text.length === tailUnits);
      this.copies[k] = this.copies[k + 1]! + (repeated ? olds[k]!.text.length : 0);
    }
    const [rows, cols] = [lines.length + 1, olds.length + 1];
    [this.rows, this.cols] = [rows, cols];
    this.cost = new Float64Array(rows * cols * 2).fill(INF);
    this.trace = new Uint8Array(rows * cols * 2);
    const at = (i: number, j: number, s: number): number => (i * cols + j) * 2 + s;
    this.cost[at(0, 0, OPEN)] = 0;
    for (let i = 0; i < rows; i++) {
      for (let j = 0; j < cols; j++) {
        if (i === 0 && j === 0) continue;
        let best = INF;
        let move = 0;
        if (i > 0 && j > 0) {
          const [o, d] = [this.cost[at(i - 1, j - 1, OPEN)]!, this.cost[at(i - 1, j - 1, DELETED)]!];
          const from = d < o ? DELETED : OPEN;
          const base = Math.min(o, d);
          const isTail = i - 1 === news.length;
          if (isTail ? olds[j - 1]!.text.startsWith(lines[i - 1]!.text) : lines[i - 1]!.text === olds[j - 1]!.text) {
            [best, move] = [base, (KEEP_LINE << 1) | from];
          } else if (!isTail) {
            const pair = pairCost(i - 1, j - 1);
            if (pair < INF && base + pair < best) [best, move] = [base + pair, (PAIR_LINE << 1) | from];
          }
        }
        if (i > 0) {
          const units = i - 1 === news.length ? tailUnits : lines[i - 1]!.units;
          const c = this.cost[at(i - 1, j, OPEN)]! + units;
          if (c < best) [best, move] = [c, (INSERT_LINE << 1) | OPEN];
        }
        this.cost[at(i, j, OPEN)] = best;
        this.trace[at(i, j, OPEN)] = move;
        if (j > 0) {
          const [o, d] = [this.cost[at(i, j - 1, OPEN)]!, this.cost[at(i, j - 1, DELETED)]!];
          this.cost[at(i, j, DELETED)] = Math.min(o, d) + olds[j - 1]!.text.length;
          this.trace[at(i, j, DELETED)] = (DELETE_LINE << 1) | (d < o ? DELETED : OPEN);
        }
      }
    }
  }

  /** Cells computed: one per (pending line + 1) × (window line + 1). */
  get cells(): number {
    return this.rows * this.cols;
  }

  /** The end (on the last row) of the cheapest alignment; `rest(j)`: a price for the original left past column j. */
  bestEnd(rest: (j: number) => number = () => 0): number {
    let best = INF;
    let end = -1;
    const i = this.rows - 1;
    for (let j = 0; j < this.cols; j++) {
      for (const s of [OPEN, DELETED]) {
        const c = this.cost[(i * this.cols + j) * 2 + s]! + rest(j) + this.copies[j]!;
        if (c < best) [best, end] = [c, (i * this.cols + j) * 2 + s];
      }
    }
    return end;
  }

  /** The steps from the start to node `end`. */
  steps(end: number): LineStep[] {
    const out: LineStep[] = [];
    for (let node = end; node > 1; node = this.pred(node)) out.push(this.stepInto(node));
    return out.reverse();
  }

  /**
   * How many steps of the cheapest path every end within `beam` of it also starts with, up to
   * where they join it again: what all near-optimal line diffs of the pending text agree on.
   */
  agreed(end: number, beam: number, rest: (j: number) => number = () => 0): number {
    const path: number[] = [];
    for (let node = end; node >= 0; node = node > 1 ? this.pred(node) : -1) path.push(node);
    path.reverse();
    const onPath = new Map<number, number>(path.map((node, x) => [node, x]));
    const i = this.rows - 1;
    const endColumn = (end >> 1) % this.cols;
    const best = this.cost[end]! + rest(endColumn) + this.copies[endColumn]!;
    let common = path.length - 1;
    for (let j = 0; j < this.cols && common > 0; j++) {
      for (const s of [OPEN, DELETED]) {
        let node = (i * this.cols + j) * 2 + s;
        if (this.cost[node]! + rest(j) + this.copies[j]! > best + beam) continue;
        while (!onPath.has(node)) node = this.pred(node);
        common = Math.min(common, onPath.get(node)!);
      }
    }
    return common;
  }

  private pred(node: number): number {
    const s = node & 1;
    const cell = node >> 1;
    const [i, j] = [Math.floor(cell / this.cols), cell % this.cols];
    const t = this.trace[node]!;
    const from = t & 1;
    const type = t >> 1;
    if (s === DELETED) return (i * this.cols + j - 1) * 2 + from;
    if (type === INSERT_LINE) return ((i - 1) * this.cols + j) * 2 + from;
    return ((i - 1) * this.cols + j - 1) * 2 + from;
  }

  private stepInto(node: number): LineStep {
    const cell = node >> 1;
    const [i, j] = [Math.floor(cell / this.cols), cell % this.cols];
    const type = (node & 1) === DELETED ? DELETE_LINE : this.trace[node]! >> 1;
    if (type === DELETE_LINE) return { type, i: -1, j: j - 1 };
    if (type === INSERT_LINE) return { type, i: i - 1, j: -1 };
    return { type, i: i - 1, j: j - 1 };
  }
}
