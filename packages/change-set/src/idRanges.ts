import * as Y from 'yjs';

/** A run of consecutive Yjs ids of one client: `length` characters starting at `clock`. */
export interface IdRun {
  client: number;
  clock: number;
  length: number;
}

/** A live (not deleted) stretch of a Y.Text: `length` characters at `index`. */
export interface TextRange {
  index: number;
  length: number;
}

/**
 * Where the characters with the given ids are now, in one pass over the text's items. Deleted
 * characters are skipped; a run split by concurrent inserts comes back as several ranges.
 * Ranges are in document order.
 */
export function liveRanges(text: Y.Text, runs: readonly IdRun[]): TextRange[] {
  if (runs.length === 0) return [];
  const byClient = new Map<number, IdRun[]>();
  for (const run of runs) {
    if (run.length <= 0) continue;
    let list = byClient.get(run.client);
    if (!list) byClient.set(run.client, (list = []));
    list.push(run);
  }
  const out: TextRange[] = [];
  let index = 0;
  for (let item = text._start; item !== null; item = item.right) {
    if (item.deleted || !item.countable) continue;
    const clientRuns = byClient.get(item.id.client);
    if (clientRuns) {
      const from = item.id.clock;
      const to = from + item.length;
      for (const run of clientRuns) {
        const start = Math.max(from, run.clock);
        const end = Math.min(to, run.clock + run.length);
        if (start < end) push(out, index + (start - from), end - start);
      }
    }
    index += item.length;
  }
  return out;
}

function push(out: TextRange[], index: number, length: number): void {
  const last = out[out.length - 1];
  if (last && last.index + last.length === index) last.length += length;
  else out.push({ index, length });
}

/** The id runs of the characters in [start, end) of a text, for following them later. */
export function idRunsOf(text: Y.Text, start: number, end: number): IdRun[] {
  const runs: IdRun[] = [];
  let index = 0;
  for (let item = text._start; item !== null && index < end; item = item.right) {
    if (item.deleted || !item.countable) continue;
    const itemEnd = index + item.length;
    const from = Math.max(start, index);
    const to = Math.min(end, itemEnd);
    if (from < to) {
      const clock = item.id.clock + (from - index);
      const last = runs[runs.length - 1];
      if (last && last.client === item.id.client && last.clock + last.length === clock) last.length += to - from;
      else runs.push({ client: item.id.client, clock, length: to - from });
    }
    index = itemEnd;
  }
  return runs;
}

/** Splits runs at a character offset: the first `count` characters, and the rest. */
export function splitRuns(runs: readonly IdRun[], count: number): [IdRun[], IdRun[]] {
  const head: IdRun[] = [];
  const tail: IdRun[] = [];
  let left = count;
  for (const run of runs) {
    if (left >= run.length) {
      head.push(run);
      left -= run.length;
    } else if (left > 0) {
      head.push({ ...run, length: left });
      tail.push({ client: run.client, clock: run.clock + left, length: run.length - left });
      left = 0;
    } else tail.push(run);
  }
  return [head, tail];
}

/** Deletes the given ranges from the text, right to left so earlier indexes stay valid. */
export function deleteRanges(text: Y.Text, ranges: readonly TextRange[]): void {
  for (let i = ranges.length - 1; i >= 0; i--) {
    const range = ranges[i]!;
    text.delete(range.index, range.length);
  }
}

/** The index a relative position points at now, or null when its type is gone. */
export function indexOf(doc: Y.Doc, position: Y.RelativePosition): number | null {
  return Y.createAbsolutePositionFromRelativePosition(position, doc)?.index ?? null;
}
