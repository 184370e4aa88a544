/**
 * One edit operation, expressed against the ORIGINAL text. Ops are read in order by a cursor
 * that starts at offset 0 of the original:
 *
 * - `keep {length}`   copies `original.slice(cursor, cursor + length)` to the output and moves
 *                     the cursor forward by `length`;
 * - `delete {length}` skips `original.slice(cursor, cursor + length)` (it is not copied) and
 *                     moves the cursor forward by `length`;
 * - `insert {text}`   writes `text` to the output; the cursor does not move.
 *
 * Lengths are UTF-16 code units (JavaScript string indices), always ≥ 1, and never split a
 * surrogate pair; insert text is never empty. Ops returned by different calls simply continue
 * one another: the cursor carries over from call to call.
 *
 * @example
 * // original 'const a = 1;\n'  →  new text 'const b = 1;\n'
 * const ops: DiffOp[] = [
 *   { type: 'keep', length: 6 },    // 'const '
 *   { type: 'insert', text: 'b' },  // written before the original 'a'
 *   { type: 'delete', length: 1 },  // 'a'
 *   { type: 'keep', length: 6 },    // ' = 1;\n'
 * ];
 */
export type DiffOp =
  | { readonly type: 'keep'; readonly length: number }
  | { readonly type: 'insert'; readonly text: string }
  | { readonly type: 'delete'; readonly length: number };

/**
 * Applies `ops` to `original`. The part of the original the cursor has not reached is carried
 * over unchanged, so applying the ops emitted *so far* gives the text an editor should show
 * mid-stream, and applying every op of a finished stream gives exactly the final new text.
 *
 * @throws RangeError when a `keep` or `delete` runs past the end of `original`.
 * @example
 * applyOps('hello world', [
 *   { type: 'keep', length: 6 },
 *   { type: 'insert', text: 'there' },
 *   { type: 'delete', length: 5 },
 * ]); // 'hello there'
 * applyOps('abc', [{ type: 'insert', text: 'x' }]); // 'xabc' (the rest is carried over)
 */
export function applyOps(original: string, ops: readonly DiffOp[]): string {
  const out: string[] = [];
  let cursor = 0;
  for (const op of ops) {
    if (op.type === 'insert') {
      out.push(op.text);
      continue;
    }
    const end = cursor + op.length;
    if (end > original.length) {
      throw new RangeError(`${op.type} of ${op.length} at ${cursor} runs past the original (${original.length})`);
    }
    if (op.type === 'keep') out.push(original.slice(cursor, end));
    cursor = end;
  }
  out.push(original.slice(cursor));
  return out.join('');
}

/** Collects ops for one call, merging neighbours of the same type so callers get minimal lists. */
export class OpSink {
  private readonly ops: DiffOp[] = [];
  private text: string[] = [];

  keep(length: number): void {
    this.counted('keep', length);
  }

  delete(length: number): void {
    this.counted('delete', length);
  }

  insert(text: string): void {
    if (text.length === 0) return;
    const last = this.ops[this.ops.length - 1];
    if (last?.type !== 'insert') this.ops.push({ type: 'insert', text: '' });
    this.text.push(text);
  }

  take(): DiffOp[] {
    this.flushText();
    return this.ops.splice(0);
  }

  private counted(type: 'keep' | 'delete', length: number): void {
    if (length <= 0) return;
    this.flushText();
    const last = this.ops[this.ops.length - 1];
    if (last?.type === type) this.ops[this.ops.length - 1] = { type, length: last.length + length };
    else this.ops.push({ type, length });
  }

  // Inserts arrive one code point at a time; joining once avoids quadratic string building.
  private flushText(): void {
    if (this.text.length === 0) return;
    const last = this.ops[this.ops.length - 1];
    const head = last?.type === 'insert' ? last.text : '';
    this.ops[this.ops.length - 1] = { type: 'insert', text: head + this.text.join('') };
    this.text = [];
  }
}
