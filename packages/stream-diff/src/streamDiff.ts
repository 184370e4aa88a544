import type { Origin } from './align';
import { LF } from './costs';
import { LinePair, lineStart } from './linePair';
import { LineLedger } from './lineLedger';
import { DELETE_LINE, INSERT_LINE, KEEP_LINE, LineAlignment, OriginalLines, PAIR_LINE, type LineStep, type NewLine, type OriginalLine } from './lines';
import { OpSink, type DiffOp } from './ops';
import { findJump, resyncRule } from './resync';
import { afterLines, extendRun, startRun, type Run } from './verbatim';

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
  /** Character alignment cells: one per (code point + 1) × (original code point + 1) of a line pair. */
  readonly cells: number;
  /** Line alignment cells: one per (pending line + 1) × (window line + 1) ([D20]). */
  readonly lineCells: number;
  /** Code points compared, or code units searched, outside the alignments (verbatim matching, line similarity). */
  readonly compared: number;
  /** Traceback steps taken while deciding what to commit. */
  readonly traced: number;
}

/** [D20] Near-optimal line diffs within this many code units of the cheapest keep a decision open. */
const LINE_BEAM = 128;

/** A line of new text longer than the pending bound, partly committed ([D9]). */
type LongLine = { readonly mode: 'insert'; readonly written: string } | { readonly mode: 'pair'; readonly origin: Origin; readonly end: number };

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
 * Lines are committed at line breaks, once every near-optimal line diff of the pending text
 * agrees on them, with at most `lookaheadLines` lines / `maxPending` code points held back
 * (SPEC.md [D6]–[D9], [D20]); a changed line is written as its character edit when that is
 * smaller than replacing it. Where the chunks fall does not matter ([D21]).
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
  private readonly pair: LinePair;
  private readonly lines: OriginalLines;
  private readonly maxPending: number;
  private readonly lookaheadLines: number;
  private readonly windowSize: number;
  /** New text received but not committed, as code points. */
  private readonly pending: number[] = [];
  /** The complete lines at the head of `pending`. */
  private news: NewLine[] = [];
  private nextLineId = 0;
  /** A high surrogate that ended the last chunk, waiting for its pair. */
  private carry = '';
  /** How far into the original the ops returned so far reach. */
  private cursor = 0;
  private run: Run = startRun(0);
  private partial: LongLine | null = null;
  private readonly ledger: LineLedger;
  private compared = 0;
  private lineCells = 0;
  private done = false;

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
    this.pair = new LinePair(original, windowSize);
    this.lines = new OriginalLines(original);
    this.ledger = new LineLedger(this.lookaheadLines + 2);
  }

  get stats(): StreamingDiffStats {
    return { cells: this.pair.cells, lineCells: this.lineCells, compared: this.compared + this.ledger.compared + this.lines.scanned, traced: this.pair.traced };
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
    for (let off = 0; off < text.length; ) {
      if (this.pending.length === 0 && this.partial === null && this.cursor === this.original.length) {
        // Nothing of the original is left to align against, so new text can only be an insert:
        // commit it at once instead of a line at a time ([D17]).
        sink.insert(text.slice(off));
        break;
      }
      const cp = text.codePointAt(off)!;
      off += cp > 0xffff ? 2 : 1;
      this.pending.push(cp);
      // [D21] Decisions are taken at points of the text, never of the chunking: at each line
      // break, and whenever the pending text outgrows its bound.
      if (cp === LF) this.decide(sink, true);
      else if (this.pending.length > this.maxPending) this.decide(sink, false);
    }
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
    const keepRest = options.keepRest === true;
    if (this.partial) this.endPartial(sink, this.pending.length, keepRest);
    this.fastForward(sink);
    const tail = this.news.length > 0 ? this.news[this.news.length - 1]!.to : 0;
    if (!keepRest && tail < this.pending.length) this.addLine(tail, this.pending.length);
    // [D13] The last lines that repeat the original's last lines are kept, however far past the
    // window: an ending the model copied is not deleted and written again.
    const [suffix, from] = keepRest ? [0, this.original.length] : this.sameEnding();
    const head = this.news.length - suffix;
    if (head > 0) {
      const { alignment, window } = this.align(head, from);
      const end = keepRest ? alignment.bestEnd() : alignment.bestEnd((j) => from - (window[j]?.start ?? this.windowEnd(window)));
      const steps = alignment.steps(end);
      while (keepRest && steps.length > 0 && steps[steps.length - 1]!.type === DELETE_LINE) steps.pop();
      this.commit(steps, window, sink);
    }
    if (suffix > 0) {
      sink.delete(from - this.cursor);
      sink.keep(this.original.length - from);
      this.cursor = this.original.length;
      this.drop(this.pending.length, suffix);
    }
    if (keepRest && this.pending.length > 0) {
      // The line it broke off in: its best alignment with what lies ahead, the rest kept.
      const first = this.lines.indexAt(this.cursor);
      const end = this.windowEnd(first < 0 ? [] : this.lines.window(first, this.windowSize));
      this.cursor = this.pair.finish(lineStart(this.cursor), end, this.pending, sink, true);
    }
    if (!keepRest) sink.delete(this.original.length - this.cursor);
    this.pending.length = 0;
    return sink.take();
  }

  private assertOpen(): void {
    if (this.done) throw new Error('StreamingDiff: finish() was already called');
  }

  /** Everything a decision point does: see push. `lineEnd`: the last code point is a line break. */
  private decide(sink: OpSink, lineEnd: boolean): void {
    if (this.partial) {
      if (lineEnd) this.endPartial(sink, this.pending.length, false);
      else this.advancePartial(sink);
      return;
    }
    if (lineEnd) this.addLine(this.news.length > 0 ? this.news[this.news.length - 1]!.to : 0, this.pending.length);
    for (let progress = true; progress; ) {
      this.fastForward(sink);
      if (this.news.length === 0) break;
      progress = this.settle(sink);
    }
    if (this.news.length === 0 && this.pending.length > this.maxPending) this.startPartial(sink);
  }

  private addLine(from: number, to: number): void {
    const text = String.fromCodePoint(...this.pending.slice(from, to));
    this.news.push({ id: this.nextLineId++, from, to, text, units: text.length });
  }

  /** How many of the last pending lines repeat the original's last lines, and where they start in it. */
  private sameEnding(): [number, number] {
    let [count, from] = [0, this.original.length];
    for (let i = this.news.length - 1; i >= 0; i--) {
      const text = this.news[i]!.text;
      const start = from - text.length;
      this.compared += text.length;
      if (start < this.cursor || (start > 0 && this.original.charCodeAt(start - 1) !== LF) || !this.original.startsWith(text, start)) break;
      [count, from] = [count + 1, start];
    }
    return [count, from];
  }

  /**
   * The line diff of the first `count` pending lines (and the unfinished one, while streaming)
   * against the window ahead of the cursor, up to `limit` in the original.
   */
  private align(count = this.news.length, limit = this.original.length): { alignment: LineAlignment; window: OriginalLine[] } {
    const first = this.lines.indexAt(this.cursor);
    const window = first < 0 ? [] : this.lines.window(first, this.windowSize).filter((w) => w.end <= limit);
    const news = count === this.news.length ? this.news : this.news.slice(0, count);
    const end = this.news.length > 0 ? this.news[this.news.length - 1]!.to : 0;
    const tail = end < this.pending.length && !this.done ? String.fromCodePoint(...this.pending.slice(end)) : null;
    const texts = new Set(window.map((w) => w.text));
    const alignment = new LineAlignment(news, window, (i, j) => this.ledger.pairCost(news[i]!, window[j]!, first + j, texts), tail);
    this.lineCells += alignment.cells;
    return { alignment, window };
  }

  private windowEnd(window: readonly OriginalLine[]): number {
    return window.length > 0 ? window[window.length - 1]!.end : this.cursor;
  }

  /**
   * [D6][D9][D20] Commits what every near-optimal line diff of the pending lines agrees on, then,
   * past the pending bounds, the older half along the cheapest one. Returns whether it committed.
   */
  private settle(sink: OpSink): boolean {
    const { alignment, window } = this.align();
    const rest = this.ledger.spentPast(window);
    const best = alignment.bestEnd(rest);
    const steps = alignment.steps(best);
    const agreed = this.held(steps, alignment.agreed(best, LINE_BEAM, rest), window);
    // What stays pending once the first `x` steps are committed.
    let [lines, units] = [this.news.length, this.pending.length];
    const take = (x: number): void => {
      const line = this.news[steps[x]!.i];
      if (line) [lines, units] = [lines - 1, units - (line.to - line.from)];
    };
    for (let x = 0; x < agreed; x++) take(x);
    let upto = agreed;
    if (units > this.maxPending || lines > this.lookaheadLines) {
      // The older half: what stays is at most P/2 code points and L/2 lines.
      for (let x = upto; x < steps.length && (units > this.maxPending >> 1 || lines > this.lookaheadLines >> 1); x++) {
        const step = steps[x]!;
        if (step.i >= this.news.length) break;
        if (step.i < 0) continue;
        take(x);
        upto = x + 1;
      }
      if (upto > agreed && this.resync(steps, agreed, upto, window, sink)) return true;
    }
    if (upto === 0) return false;
    this.commit(steps.slice(0, upto), window, sink);
    return true;
  }

  /**
   * How much of the agreed prefix commits now ([D7], [D20]). A line inserted or paired waits
   * until the cheapest line diff keeps a pending line after it (till then it may start a block
   * the original holds past the window, [D10], or be a line moved up), unless the window reaches
   * the end of the original and holds no copy of it. An original line is deleted once the new
   * text goes on for two lines after it (a line that repeats what follows it may be one moved up,
   * the deleted one coming next).
   */
  private held(steps: readonly LineStep[], agreed: number, window: readonly OriginalLine[]): number {
    const tail = steps.findIndex((step) => step.i >= this.news.length);
    if (tail >= 0) agreed = Math.min(agreed, tail);
    let lastKeep = -1;
    for (let x = 0; x < steps.length; x++) if (steps[x]!.type === KEEP_LINE && steps[x]!.i < this.news.length) lastKeep = x;
    // A window that reaches the end of the original leaves no block further on to find, but a
    // line it repeats further on may still be one moved up.
    const whole = this.windowEnd(window) === this.original.length;
    let upto = agreed;
    for (let x = 0, column = 0; x < agreed && upto === agreed; x++) {
      const step = steps[x]!;
      const written = step.type === INSERT_LINE || step.type === PAIR_LINE;
      if (written && x > lastKeep && (!whole || this.repeatsAhead(this.news[step.i]!.text, window, column))) upto = x;
      if (step.type === DELETE_LINE && steps.slice(x + 1, agreed).filter((s) => s.i >= 0).length < 2) upto = x;
      if (step.j >= 0) column = step.j + 1;
    }
    while (upto > 0 && steps[upto - 1]!.type === DELETE_LINE) upto--;
    return upto;
  }

  /** Whether a window line at or past `column` repeats `text`. */
  private repeatsAhead(text: string, window: readonly OriginalLine[], column: number): boolean {
    for (let j = column; j < window.length; j++) if (window[j]!.text === text) return true;
    return false;
  }

  /** Writes `steps` (a prefix of a line diff of the pending lines) and drops what they used. */
  private commit(steps: readonly LineStep[], window: readonly OriginalLine[], sink: OpSink): void {
    let used = 0;
    let lines = 0;
    for (const step of steps) {
      const old = step.j >= 0 ? window[step.j]! : null;
      const line = step.i >= 0 ? this.news[step.i]! : null;
      if (step.type === KEEP_LINE) sink.keep(old!.end - old!.start);
      else if (step.type === DELETE_LINE) sink.delete(old!.end - old!.start);
      else if (step.type === INSERT_LINE) sink.insert(line!.text);
      else this.pair.finish(lineStart(old!.start), old!.end, this.pending.slice(line!.from, line!.to), sink);
      if (step.type === INSERT_LINE) this.ledger.inserted(line!.text, window);
      if (old) {
        this.cursor = old.end;
        this.ledger.consumed(old.text, step.type !== KEEP_LINE);
      }
      if (line) [used, lines] = [line.to, lines + 1];
    }
    this.drop(used, lines);
  }

  /** Removes the first `count` code points (the first `lines` complete lines) from the pending text. */
  private drop(count: number, lines: number): void {
    if (count === 0 && lines === 0) return;
    this.pending.splice(0, count);
    for (const l of this.news.slice(0, lines)) this.ledger.forget(l.id);
    this.news = this.news.slice(lines).map((l) => ({ ...l, from: l.from - count, to: l.to - count }));
    this.run = startRun(this.cursor);
    this.lines.drop(Math.max(0, this.lines.indexAt(this.cursor)));
  }

  /** [D10] The jump past a deleted block, if the forced steps `[from, to)` start one: taken, true. */
  private resync(steps: readonly LineStep[], from: number, to: number, window: readonly OriginalLine[], sink: OpSink): boolean {
    const columns: number[] = [];
    for (let x = 0, column = 0; x < steps.length; x++) {
      columns.push(column);
      if (steps[x]!.j >= 0) column = steps[x]!.j + 1;
    }
    const offsetAt = (x: number): number => window[columns[x]!]?.start ?? this.windowEnd(window);
    const { jump, work } = findJump({
      original: this.original,
      pending: this.pending,
      news: this.news,
      steps,
      from,
      to,
      offsetAt,
      cursor: this.cursor,
      rule: resyncRule(this.maxPending),
    });
    this.compared += work;
    if (!jump) return false;
    this.commit(steps.slice(0, jump.start), window, sink);
    sink.delete(jump.target - this.cursor);
    this.cursor = jump.target;
    this.run = startRun(jump.target);
    return true;
  }

  /**
   * A line longer than the pending bound ([D9]): its older half is committed against the line at
   * the cursor — kept where it repeats it (or a line a little further on, the lines between
   * deleted), aligned where it resembles it, else inserted — and the rest of the line follows it.
   */
  private startPartial(sink: OpSink): void {
    const rows = this.pending.length - (this.maxPending >> 1);
    const { alignment, window } = this.align();
    const text = String.fromCodePoint(...this.pending);
    this.compared += text.length;
    // The line at the cursor, repeated so far, is kept ([D8]); else the line diff decides.
    const steps = window[0]?.text.startsWith(text) ? [{ type: KEEP_LINE, i: 0, j: 0 }] : alignment.steps(alignment.bestEnd(this.ledger.spentPast(window)));
    const line = steps.find((step) => step.i >= 0);
    if (line?.type === KEEP_LINE) {
      const old = window[line.j]!;
      sink.delete(old.start - this.cursor);
      for (const step of steps) if (step.type === DELETE_LINE) this.ledger.consumed(window[step.j]!.text, true);
      this.cursor = old.start;
      this.partial = { mode: 'pair', origin: lineStart(old.start), end: old.end };
    } else {
      const head = window[0];
      const alike = head && this.ledger.alike(text, head.text, true);
      this.partial = alike ? { mode: 'pair', origin: lineStart(head.start), end: head.end } : { mode: 'insert', written: '' };
    }
    this.advancePartial(sink, rows);
  }

  private advancePartial(sink: OpSink, rows = this.pending.length - (this.maxPending >> 1)): void {
    const part = this.partial!;
    if (part.mode === 'insert') {
      const text = String.fromCodePoint(...this.pending.slice(0, rows));
      sink.insert(text);
      this.partial = { mode: 'insert', written: part.written + text };
      this.pending.splice(0, rows);
      return;
    }
    const origin = this.pair.advance(part.origin, part.end, this.pending, rows, sink);
    this.cursor = origin.offset;
    this.partial = { ...part, origin };
    this.pending.splice(0, rows);
  }

  /** The line in progress ends: the rest of it (its first `rows` code points) is committed. */
  private endPartial(sink: OpSink, rows: number, free: boolean): void {
    const part = this.partial!;
    const cps = this.pending.slice(0, rows);
    if (part.mode === 'insert') {
      const rest = String.fromCodePoint(...cps);
      sink.insert(rest);
      const first = this.lines.indexAt(this.cursor);
      this.ledger.insertedLong(part.written + rest, first < 0 ? [] : this.lines.window(first, this.windowSize));
    } else this.cursor = this.pair.finish(part.origin, part.end, cps, sink, free);
    this.pending.splice(0, rows);
    this.partial = null;
    this.run = startRun(this.cursor);
  }

  /**
   * Keeps, without aligning, the whole lines at the head of the pending text that repeat the
   * original at the cursor verbatim, so unchanged code costs O(its length) ([D8]).
   */
  private fastForward(sink: OpSink): void {
    const run = this.run;
    this.compared += extendRun(this.original, this.pending, run);
    if (run.lineK === 0) return;
    sink.keep(run.lineOff - this.cursor);
    this.cursor = run.lineOff;
    const lines = this.news.filter((l) => l.to <= run.lineK).length;
    for (const l of this.news.slice(0, lines)) this.ledger.forget(l.id);
    const count = run.lineK;
    this.pending.splice(0, count);
    this.news = this.news.slice(lines).map((l) => ({ ...l, from: l.from - count, to: l.to - count }));
    this.run = afterLines(run);
  }
}
