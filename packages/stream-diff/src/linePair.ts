// Character edits inside one line pair ([D5] within [D20]): a changed line written against the
// original line it replaces, whole or a piece at a time when the line outgrows the pending bound.
import { Aligner, finalPath, type Origin } from './align';
import { KEEP, LF } from './costs';
import { OpSink, type DiffOp } from './ops';

/** Where a line pair starts: the start of its original line, as after a line break. */
export const lineStart = (offset: number): Origin => ({ offset, state: KEEP, prevChar: LF, blankLine: true });

const units = (cps: readonly number[]): number => cps.reduce((n, c) => n + (c > 0xffff ? 2 : 1), 0);

const cost = (ops: readonly DiffOp[]): number =>
  ops.reduce((n, op) => n + (op.type === 'insert' ? op.text.length : op.type === 'delete' ? op.length : 0), 0);

function forward(ops: readonly DiffOp[], sink: OpSink): void {
  for (const op of ops) {
    if (op.type === 'insert') sink.insert(op.text);
    else if (op.type === 'keep') sink.keep(op.length);
    else sink.delete(op.length);
  }
}

/** The character alignment of new text against one original line, from an origin inside it. */
export class LinePair {
  private readonly aligner: Aligner;

  constructor(
    private readonly original: string,
    windowSize: number,
  ) {
    this.aligner = new Aligner(original, windowSize);
  }

  get cells(): number {
    return this.aligner.cells;
  }

  get traced(): number {
    return this.aligner.traced;
  }

  /**
   * Writes `cps` (the rest of a new line) against the original from `origin` to `end` (the rest
   * of its line): the cheaper of the character alignment and replacing the rest whole, so a
   * pair never costs more than the line it replaces ([D20]). `free`: the line broke off, so the
   * original past the alignment's end is left, not deleted. Returns where it ends.
   */
  finish(origin: Origin, end: number, cps: readonly number[], sink: OpSink, free = false): number {
    const al = this.aligner;
    al.reset(origin, this.codePoints(origin.offset, end));
    al.extend(cps);
    const path = finalPath(al, cps.length, free ? null : end - origin.offset);
    const scratch = new OpSink();
    const reached = al.emit(path, path.length - 1, cps, scratch).offset;
    const ops = scratch.take();
    if (!free && reached < end) ops.push({ type: 'delete', length: end - reached });
    const whole = units(cps) + (free ? 0 : end - origin.offset);
    if (cost(ops) < whole || free) {
      // [D7] The original a line ends by deleting goes before the new line's last words, so no
      // delete is returned that the received text has not moved past.
      const [last, before] = [ops[ops.length - 1], ops[ops.length - 2]];
      if (last?.type === 'delete' && before?.type === 'insert') ops.splice(-2, 2, last, before);
      forward(ops, sink);
      return free ? reached : end;
    }
    sink.delete(end - origin.offset);
    sink.insert(String.fromCodePoint(...cps));
    return end;
  }

  /**
   * Commits the first `rows` code points of `cps` (part of a line longer than the pending
   * bound allows) along their best alignment with the original from `origin` to `end`, with a
   * free end; returns the origin the rest of the line continues from ([D9] on one line).
   */
  advance(origin: Origin, end: number, cps: readonly number[], rows: number, sink: OpSink): Origin {
    const al = this.aligner;
    al.reset(origin, this.codePoints(origin.offset, end));
    al.extend(cps);
    const path = finalPath(al, cps.length, null);
    let x = 0;
    while (x < path.length - 1 && al.row(path[x]!) < rows) x++;
    return al.emit(path, x, cps, sink);
  }

  private codePoints(from: number, to: number): number {
    let n = 0;
    for (let i = from; i < to; i++) if ((this.original.charCodeAt(i) & 0xfc00) !== 0xdc00) n++;
    return n;
  }
}
