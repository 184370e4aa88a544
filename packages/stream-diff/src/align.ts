import * as costs from './costs';
import type { OpSink } from './ops';

// Local copies: transpiled module bindings can turn every use in the inner loop into a getter call.
const { C_DEL, C_GAP, C_INS, DEL, INS, KEEP, LF, isBlank, junction } = costs;

const INF = 0x3fffffff;

/** Where the alignment starts: the committed point. */
export interface Origin {
  /** Code units of the original consumed by committed ops. */
  readonly offset: number;
  /** State of the last committed op (KEEP at the very start). */
  readonly state: number;
  /** Last committed new code point; LF at the start of the text. */
  readonly prevChar: number;
  /** Whether the committed new text since its last LF is only blanks. */
  readonly blankLine: boolean;
}

/**
 * Incremental affine-gap alignment of new text (rows: a changed line, [D5]) against a bounded
 * window of the original that starts at the committed cursor (columns: the line it pairs with). Each cell keeps the cheapest cost
 * of ending in each state: KEEP comes diagonally and needs equal code points, INS comes from the
 * cell above, DEL from the cell to the left; changing state opens a gap (C_GAP plus a junction
 * price where a gap meets kept text). DEL→INS is only allowed at the origin, so a changed region
 * has one canonical order, inserts first, and equal alternatives are not explored twice.
 *
 * Rows are added as text arrives and dropped when the origin moves. A node is the key
 * `(row * (cols + 1) + col) * 3 + state`; one byte per cell holds the three back-pointers.
 */
export class Aligner {
  cells = 0;
  traced = 0;
  private origin: Origin = { offset: 0, state: KEEP, prevChar: LF, blankLine: true };
  private stale = true;
  /** Columns the window may have now: `cap`, or less (the rest of one original line). */
  private limit: number;
  private cols = 0;
  private rowCount = 0;
  private readonly w: Int32Array;
  private readonly ends: Int32Array;
  private readonly rows: Uint8Array[] = [];
  private readonly blank: number[] = [];
  private cur: [Int32Array, Int32Array, Int32Array];
  private prev: [Int32Array, Int32Array, Int32Array];

  constructor(
    private readonly original: string,
    private readonly cap: number,
  ) {
    this.limit = cap;
    // A window never has more columns than the original has code units: a short original (an
    // insertion has none) needs short arrays. Eight of the full width cost ~80 µs to allocate
    // after an idle spell, on the path of every prompt before its provider request leaves.
    const size = Math.min(cap, original.length) + 1;
    this.w = new Int32Array(size);
    this.ends = new Int32Array(size);
    const arr = (): Int32Array => new Int32Array(size);
    this.cur = [arr(), arr(), arr()];
    this.prev = [arr(), arr(), arr()];
  }

  get at(): Origin {
    return this.origin;
  }

  /** Moves the origin; rows are rebuilt lazily by the next `extend`. `limit` ≤ cap. */
  reset(origin: Origin, limit = this.cap): void {
    this.origin = origin;
    this.limit = Math.min(limit, this.cap);
    this.stale = true;
  }

  /** Computes rows up to `p.length`; rows already computed for this origin are reused. */
  extend(p: readonly number[]): void {
    if (this.stale) this.window();
    if (this.rowCount === 0) this.first();
    for (let r = this.rowCount; r <= p.length; r++) this.next(r, p);
  }

  /** Columns of the current window (code points of the original it covers). */
  get width(): number {
    return this.cols;
  }

  /** Cost of the cell (last computed row, column `j`, state `s`). */
  costAt(s: number, j: number): number {
    return this.cur[s]![j]!;
  }

  /** Code units of the original between the origin and window column `j`. */
  consumed(j: number): number {
    return this.ends[j]!;
  }

  /** The key of node (row `r`, column `j`, state `s`). */
  key(r: number, j: number, s: number): number {
    return (r * (this.cols + 1) + j) * 3 + s;
  }

  /** Code points of pending new text consumed once node `key` is committed. */
  row(key: number): number {
    return Math.floor(key / 3 / (this.cols + 1));
  }

  /** Code units of the original consumed once node `key` is committed. */
  offsetOf(key: number): number {
    return this.origin.offset + this.ends[Math.floor(key / 3) % (this.cols + 1)]!;
  }

  /** Writes the ops of `path[1..upto]` and returns the origin that node `path[upto]` stands for. */
  emit(path: readonly number[], upto: number, p: readonly number[], sink: OpSink): Origin {
    const stride = this.cols + 1;
    let r = 0;
    let j = 0;
    let s = this.origin.state;
    for (let x = 1; x <= upto; x++) {
      const key = path[x]!;
      s = key % 3;
      j = ((key - s) / 3) % stride;
      r = ((key - s) / 3 - j) / stride;
      if (s === INS) sink.insert(String.fromCodePoint(p[r - 1]!));
      else if (s === KEEP) sink.keep(this.ends[j]! - this.ends[j - 1]!);
      else sink.delete(this.ends[j]! - this.ends[j - 1]!);
    }
    return {
      offset: this.origin.offset + this.ends[j]!,
      state: s,
      prevChar: r > 0 ? p[r - 1]! : this.origin.prevChar,
      blankLine: this.blank[r] === 1,
    };
  }

  /** The nodes from the origin to `key`. */
  trace(key: number): number[] {
    const out: number[] = [];
    for (let k = key; k >= 0; k = this.pred(k)) out.push(k);
    this.traced += out.length;
    return out.reverse();
  }

  /** The node before `key` on its optimal path; -1 at the origin. */
  pred(key: number): number {
    const stride = this.cols + 1;
    const s = key % 3;
    const cell = (key - s) / 3;
    const j = cell % stride;
    const r = (cell - j) / stride;
    if (r === 0 && j === 0) return -1;
    const b = this.rows[r]![j]!;
    if (s === KEEP) return (cell - stride - 1) * 3 + (b & 3);
    if (s === INS) return (cell - stride) * 3 + ((b >> 2) & 3);
    return (cell - 1) * 3 + ((b >> 4) & 3);
  }

  private window(): void {
    const { original, origin, limit } = this;
    let off = origin.offset;
    let j = 0;
    while (j < limit && off < original.length) {
      const cp = original.codePointAt(off)!;
      off += cp > 0xffff ? 2 : 1;
      this.w[++j] = cp;
      this.ends[j] = off - origin.offset;
    }
    this.cols = j;
    this.rowCount = 0;
    this.stale = false;
  }

  private ptrRow(r: number): Uint8Array {
    let row = this.rows[r];
    // Sized to the window actually seen, so short originals do not pay for the full capacity.
    if (!row || row.length <= this.cols) this.rows[r] = row = new Uint8Array(this.cols + 1);
    return row;
  }

  private first(): void {
    const { state, prevChar, blankLine } = this.origin;
    const [m, i, d] = this.cur;
    const ptr = this.ptrRow(0);
    const bl = blankLine ? 1 : 0;
    this.blank[0] = bl;
    m[0] = state === KEEP ? 0 : INF;
    i[0] = state === INS ? 0 : INF;
    d[0] = state === DEL ? 0 : INF;
    for (let j = 1; j <= this.cols; j++) {
      m[j] = INF;
      i[j] = INF;
      let bd = d[j - 1]! + C_DEL;
      let sd = DEL;
      let t = i[j - 1]! + C_GAP + C_DEL;
      if (t < bd) {
        bd = t;
        sd = INS;
      }
      if (m[j - 1]! < INF) {
        t = m[j - 1]! + C_GAP + C_DEL + junction(prevChar, bl, this.w[j]!);
        if (t < bd) {
          bd = t;
          sd = KEEP;
        }
      }
      d[j] = Math.min(bd, INF);
      ptr[j] = sd << 4;
    }
    this.cells += this.cols + 1;
    this.rowCount = 1;
  }

  private next(r: number, p: readonly number[]): void {
    [this.prev, this.cur] = [this.cur, this.prev];
    const [pm, pi, pd] = this.prev;
    const [m, i, d] = this.cur;
    const w = this.w;
    const c = p[r - 1]!;
    const before = r >= 2 ? p[r - 2]! : this.origin.prevChar;
    const blankBefore = this.blank[r - 1]!;
    const jn = junction(before, blankBefore, c);
    const bl = c === LF ? 1 : blankBefore && isBlank(c) ? 1 : 0;
    this.blank[r] = bl;
    const openI = C_GAP + jn + C_INS;
    const ptr = this.ptrRow(r);
    // Column 0 only inserts; right after a committed delete, DEL→INS is the only way to insert.
    let bi = pi[0]! + C_INS;
    let si = INS;
    let t = pm[0]! + openI;
    if (t < bi) {
      bi = t;
      si = KEEP;
    }
    if (r === 1 && this.origin.state === DEL && pd[0]! + openI < bi) {
      bi = pd[0]! + openI;
      si = DEL;
    }
    let lm = INF; // this row, previous column
    let li = bi < INF ? bi : INF;
    let ld = INF;
    let dm = pm[0]!; // previous row, previous column
    let di = pi[0]!;
    let dd = pd[0]!;
    m[0] = lm;
    i[0] = li;
    d[0] = ld;
    ptr[0] = (si << 2) | (DEL << 4);
    for (let j = 1, n = this.cols; j <= n; j++) {
      const um = pm[j]!;
      const ui = pi[j]!;
      let bm = INF;
      let sm = KEEP;
      if (w[j] === c) {
        bm = dm;
        t = di + jn;
        if (t < bm) {
          bm = t;
          sm = INS;
        }
        t = dd + jn;
        if (t < bm) {
          bm = t;
          sm = DEL;
        }
        if (bm > INF) bm = INF;
      }
      bi = ui + C_INS;
      si = INS;
      t = um + openI;
      if (t < bi) {
        bi = t;
        si = KEEP;
      }
      if (bi > INF) bi = INF;
      let bd = ld + C_DEL;
      let sd = DEL;
      t = li + C_GAP + C_DEL;
      if (t < bd) {
        bd = t;
        sd = INS;
      }
      if (lm < INF) {
        t = lm + C_GAP + C_DEL + junction(c, bl, w[j]!);
        if (t < bd) {
          bd = t;
          sd = KEEP;
        }
      }
      if (bd > INF) bd = INF;
      m[j] = lm = bm;
      i[j] = li = bi;
      d[j] = ld = bd;
      ptr[j] = sm | (si << 2) | (sd << 4);
      dm = um;
      di = ui;
      dd = pd[j]!;
    }
    this.cells += this.cols + 1;
    this.rowCount = r + 1;
  }
}

/**
 * The optimal complete alignment of row `n`: its end pays for deleting the `rest` of the original,
 * or, when `rest` is null (the rest stays, [D19]), its end is free.
 */
export function finalPath(al: Aligner, n: number, rest: number | null): number[] {
  let best = Infinity;
  let bestKey = -1;
  for (let j = 0; j <= al.width; j++) {
    const left = rest === null ? 0 : rest - al.consumed(j);
    for (let s = KEEP; s <= DEL; s++) {
      const c = al.costAt(s, j) + (left === 0 ? 0 : left * C_DEL + (s === DEL ? 0 : C_GAP));
      if (c < best) [best, bestKey] = [c, al.key(n, j, s)];
    }
  }
  return al.trace(bestKey);
}
