import { Aligner, type Origin } from './align';
import { commonPrefix, finalPath } from './converge';
import { BEAM, DEL, INS, KEEP, LF } from './costs';
import { OpSink, type DiffOp } from './ops';
import { afterLines, extendRun, findRepeat, lineBefore, repeatsLine, startRun, type RepeatRule, type Run } from './verbatim';

export { applyOps, type DiffOp } from './ops';

/** Tuning knobs. Each bounds work or latency; see SPEC.md [D9]–[D12]. */
export interface StreamingDiffOptions {
  /** W: code points of the original, ahead of the committed cursor, the alignment sees. Default 1024, ≥ 16. */
  readonly windowSize?: number;
  /** P: most code points of new text left uncommitted after a push. Default 512, in [8, W / 2]. */
  readonly maxPending?: number;
  /** L: complete lines of new text held back, at most, to decide ambiguous alignments. Default 8. */
  readonly lookaheadLines?: number;
}

/** Deterministic work counters, for tests and profiling (never wall-clock time). */
export interface StreamingDiffStats {
  /** Alignment cells computed: one per (pending code point + 1) × (window code point + 1). */
  readonly cells: number;
  /** Code points compared, or code units searched, outside the alignment (verbatim matching). */
  readonly compared: number;
  /** Traceback steps taken while deciding what to commit. */
  readonly traced: number;
}

/** [D18] Whole lines inserted in a row, with nothing of the original kept, that narrow the window to 2P. */
const NARROW_AFTER_LINES = 2;
/** [D18] An insert run this many lookaheads long (4L lines) narrows the window again, to P/2. */
const LONG_RUN_LOOKAHEADS = 4;

// Evidence for a jump past the window; never more than half of what pending text can hold.
const resyncRule = (maxPending: number): RepeatRule => ({ lines: maxPending >= 256 ? 4 : 2, solid: Math.min(160, maxPending >> 1), reach: 1 << 16 });

/**
 * Incremental, forward-only diff of a streamed rewrite against a known original.
 *
 * Feed the new text with {@link StreamingDiff.push} as it arrives, then call
 * {@link StreamingDiff.finish} once. Every returned op is final: earlier ops are never revised,
 * inserted text is never deleted, and original text is deleted only after the new text has moved
 * past it. The ops of all calls, concatenated, form one list against the original (see
 * {@link DiffOp} for the cursor semantics): `applyOps(original, allOps)` is the final new text,
 * and `applyOps(original, opsSoFar)` is what an editor should show mid-stream.
 *
 * Ops are committed a line at a time, once every near-optimal alignment agrees on them, with at
 * most `lookaheadLines` lines / `maxPending` code points held back (SPEC.md [D6]–[D9]).
 *
 * @example
 * const original = 'let a = 1;\nlet b = 2;\n';
 * const diff = new StreamingDiff(original);
 * diff.push('let a = 1;\nlet b'); // [{type:'keep', length:11}]: the unchanged first line
 * diff.push(' = 3;\n');           // []: the edited line waits for more evidence
 * diff.finish();
 * // [{type:'keep', length:8}, {type:'insert', text:'3'}, {type:'delete', length:1}, {type:'keep', length:2}]
 * // applyOps(original, allOpsAbove) === 'let a = 1;\nlet b = 3;\n'
 */
export class StreamingDiff {
  private readonly aligner: Aligner;
  private readonly maxPending: number;
  private readonly lookaheadLines: number;
  /** New text received but not committed, as code points. */
  private readonly pending: number[] = [];
  /** A high surrogate that ended the last chunk, waiting for its pair. */
  private carry = '';
  private run: Run = startRun(0);
  /** Line breaks committed as inserts since the cursor last moved in the original ([D18]). */
  private insertedLines = 0;
  private compared = 0;
  private done = false;
  private readonly windowSize: number;

  constructor(
    private readonly original: string,
    options: StreamingDiffOptions = {},
  ) {
    const windowSize = options.windowSize ?? 1024;
    this.maxPending = options.maxPending ?? 512;
    this.lookaheadLines = options.lookaheadLines ?? 8;
    if (!Number.isInteger(windowSize) || windowSize < 16) throw new RangeError('windowSize must be an integer ≥ 16');
    if (!Number.isInteger(this.maxPending) || this.maxPending < 8 || this.maxPending * 2 > windowSize) {
      throw new RangeError('maxPending must be an integer in [8, windowSize / 2]');
    }
    if (!Number.isInteger(this.lookaheadLines) || this.lookaheadLines < 0) {
      throw new RangeError('lookaheadLines must be a non-negative integer');
    }
    this.windowSize = windowSize;
    this.aligner = new Aligner(original, windowSize);
  }

  get stats(): StreamingDiffStats {
    return { cells: this.aligner.cells, compared: this.compared, traced: this.aligner.traced };
  }

  /** Adds the next piece of new text; returns the ops that became final (possibly none). */
  push(chunk: string): DiffOp[] {
    this.assertOpen();
    const sink = new OpSink();
    let text = this.carry + chunk;
    this.carry = '';
    const last = text.charCodeAt(text.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) {
      this.carry = text.slice(-1);
      text = text.slice(0, -1);
    }
    if (this.pending.length === 0 && this.aligner.at.offset === this.original.length) {
      // Nothing of the original is left to align against, so new text can only be an insert:
      // commit it at once instead of a line at a time (writing into an empty region, or past
      // the end of the rewritten one).
      if (text) sink.insert(text);
      return sink.take();
    }
    let fed = 0;
    for (let off = 0; off < text.length; ) {
      const cp = text.codePointAt(off)!;
      off += cp > 0xffff ? 2 : 1;
      this.pending.push(cp);
      // Settling every P code points bounds the matrix, and so one settle's work, for any chunk.
      if (++fed === this.maxPending) {
        this.settle(sink);
        fed = 0;
      }
    }
    if (fed > 0) this.settle(sink);
    return sink.take();
  }

  /**
   * Ends the stream and returns every remaining op. Later calls throw. `keepRest`: the stream
   * broke off (cancelled, or the generation failed), so what is pending is committed along its
   * best alignment and the original past it is kept, not deleted ([D19]).
   */
  finish(options: { readonly keepRest?: boolean } = {}): DiffOp[] {
    this.assertOpen();
    this.done = true;
    const sink = new OpSink();
    if (this.carry) this.pending.push(this.carry.charCodeAt(0));
    this.carry = '';
    this.fastForward(sink);
    this.aligner.extend(this.pending);
    const rest = options.keepRest ? null : this.original.length - this.aligner.at.offset;
    const path = finalPath(this.aligner, this.pending.length, rest);
    const end = this.aligner.emit(path, path.length - 1, this.pending, sink);
    if (rest !== null) sink.delete(this.original.length - end.offset);
    this.pending.length = 0;
    return sink.take();
  }

  private assertOpen(): void {
    if (this.done) throw new Error('StreamingDiff: finish() was already called');
  }

  private moveTo(origin: Origin, rows: number): void {
    // [D18] A commit that only inserted (the cursor did not move in the original) extends an
    // insert run; anything that consumed original text ends it.
    if (origin.offset === this.aligner.at.offset && origin.state === INS) {
      for (let r = 0; r < rows; r++) if (this.pending[r] === LF) this.insertedLines++;
    } else {
      this.insertedLines = 0;
    }
    this.pending.splice(0, rows);
    this.aligner.reset(origin, this.runWindow());
    this.run = startRun(origin.offset);
  }

  /**
   * [D18] The window for the insert run so far: W; 2P once 2 whole lines were inserted in a row;
   * P/2 (at least 16) once 4L were — by then the model is writing a block of its own, and the
   * original it comes back to is usually at the cursor (or far enough ahead that only [D10]
   * could find it anyway).
   */
  private runWindow(): number {
    if (this.insertedLines >= Math.max(NARROW_AFTER_LINES + 1, LONG_RUN_LOOKAHEADS * this.lookaheadLines)) return Math.max(16, this.maxPending >> 1);
    if (this.insertedLines >= NARROW_AFTER_LINES) return 2 * this.maxPending;
    return this.windowSize;
  }

  private settle(sink: OpSink): void {
    this.fastForward(sink);
    const p = this.pending;
    const n = p.length;
    const lastLine = p.lastIndexOf(LF) + 1;
    // Only whole lines (or an overlong tail) may commit, so aligning before then is wasted.
    if (lastLine === 0 && n <= this.maxPending) return;
    this.aligner.extend(p);
    const { path, common } = commonPrefix(this.aligner, n, BEAM);
    const al = this.aligner;
    const rowAt = (x: number): number => al.row(path[x]!);
    // The first path index that has consumed new text up to `row`.
    const reach = (row: number): number => {
      let x = 0;
      while (x < path.length - 1 && rowAt(x) < row) x++;
      return x;
    };
    // An unfinished line is evidence for decisions about it, so those wait for its end.
    let upto = Math.min(common, reach(lastLine));
    const from = rowAt(upto);
    // Past a limit the older half is forced out along the optimal path. Halving, rather than
    // trimming to the limit, spreads the cost of re-aligning what stays over many code points.
    let forced = n - from > this.maxPending ? n - (this.maxPending >> 1) : 0;
    let breaks = 0;
    let half = 0;
    for (let r = n - 1; r >= from; r--) {
      if (p[r] !== LF) continue;
      if (++breaks === (this.lookaheadLines >> 1) + 1) half = r + 1;
      if (breaks > this.lookaheadLines) {
        forced = Math.max(forced, half);
        break;
      }
    }
    if (forced > from) {
      if (this.resync(sink, path, upto, forced, reach)) return;
      upto = Math.max(upto, reach(forced));
    }
    if (upto === 0) return;
    this.moveTo(al.emit(path, upto, p, sink), rowAt(upto));
    this.fastForward(sink);
  }

  /**
   * Before forcing out a line the alignment would insert whole, looks for it beyond the window:
   * a deleted block longer than the window would otherwise turn all that follows into inserts.
   * On a trustworthy repeat ([D10]) commits the path up to that line, deletes up to the repeat
   * and returns true.
   */
  private resync(sink: OpSink, path: number[], upto: number, forced: number, reach: (row: number) => number): boolean {
    const p = this.pending;
    const al = this.aligner;
    for (let a = al.row(path[upto]!), e = 0, tries = 0; a < forced && tries < 2; a = e) {
      e = p.indexOf(LF, a) + 1;
      if (e === 0) return false;
      if (a === 0 ? al.at.prevChar !== LF : p[a - 1] !== LF) continue;
      const x = Math.max(upto, reach(a));
      const at = al.offsetOf(path[x]!);
      const solid = p.slice(a, e).filter((c) => c > 32).length;
      if (al.offsetOf(path[reach(e)]!) !== at || solid < 8) continue;
      tries++;
      const found = findRepeat(this.original, p, a, e, at, resyncRule(this.maxPending));
      this.compared += found.work;
      if (found.at < 0) continue;
      // The repeat may begin a line or more earlier: a line the alignment did not insert whole
      // (it kept the indentation and keyword it shares with the deleted text) is taken back
      // when it repeats the original line before the one found.
      let [start, to] = [a, found.at];
      for (const first = al.row(path[upto]!); start > first; ) {
        let from = start - 1;
        while (from > first && p[from - 1] !== LF) from--;
        const lineStart = from === 0 ? al.at.prevChar === LF : p[from - 1] === LF;
        const back = lineStart ? lineBefore(this.original, to) : -1;
        if (back < 0 || al.offsetOf(path[Math.max(upto, reach(from))]!) > back) break;
        this.compared += start - from;
        if (!repeatsLine(this.original, p, from, start, back, to)) break;
        [start, to] = [from, back];
      }
      const origin = al.emit(path, Math.max(upto, reach(start)), p, sink);
      sink.delete(to - origin.offset);
      const state = to > origin.offset ? DEL : origin.state;
      this.moveTo({ offset: to, state, prevChar: LF, blankLine: true }, start);
      this.fastForward(sink);
      return true;
    }
    return false;
  }

  /**
   * Keeps, without aligning, the whole lines at the head of the pending text that repeat the
   * original at the cursor verbatim, so unchanged code costs O(its length) ([D8]).
   */
  private fastForward(sink: OpSink): void {
    const run = this.run;
    this.compared += extendRun(this.original, this.pending, run);
    if (run.lineK === 0) return;
    const base = this.aligner.at.offset;
    sink.keep(run.lineOff - base);
    this.pending.splice(0, run.lineK);
    this.insertedLines = 0;
    this.aligner.reset({ offset: run.lineOff, state: KEEP, prevChar: LF, blankLine: true });
    this.run = afterLines(run);
  }
}
