import * as Y from 'yjs';
import type { IdRun } from './idRanges';

/** A hunk's ids: the characters it inserted, and those it removed with their text. */
export interface HunkIds {
  inserted: readonly IdRun[];
  removed: readonly IdRun[];
  /** The removed characters' text, in the order of `removed`. */
  original: string;
}

/** What a reject did to a hunk left pending: its records must follow. */
export interface PendingUpdate {
  /** Text written anew for characters it inserted: counts as its insertion from now on. */
  restored: IdRun[];
  /** Its `removed`, where some of them were written anew as placeholders (see `rejectByIds`). */
  removed: IdRun[] | null;
}

/** A character put back, or a placeholder written and deleted at once for a pending hunk's removed one. */
type Piece = { char: string; owner: number; placeholder: { hunk: number; client: number; clock: number } | null };
type Step = { type: 'delete'; index: number; length: number } | { type: 'insert'; index: number; pieces: Piece[] };

/** client → clock → a value, for single characters. */
type CharMap<T> = Map<number, Map<number, T>>;

function charMap<T>(runs: Iterable<[IdRun, (offset: number) => T]>): CharMap<T> {
  const out: CharMap<T> = new Map();
  for (const [run, value] of runs) {
    let chars = out.get(run.client);
    if (!chars) out.set(run.client, (chars = new Map()));
    for (let i = 0; i < run.length; i++) if (!chars.has(run.clock + i)) chars.set(run.clock + i, value(i));
  }
  return out;
}

const inRuns = (runs: readonly IdRun[], owner: number) => charMap(runs.map((run) => [run, () => owner] as [IdRun, () => number]));

function removedChars<T>(hunk: HunkIds, value: (char: string, offset: number) => T): Array<[IdRun, (i: number) => T]> {
  let offset = 0;
  return hunk.removed.map((run) => {
    const start = offset;
    offset += run.length;
    return [run, (i: number) => value(hunk.original[start + i] ?? '', start + i)];
  });
}

function pushRun(runs: IdRun[], client: number, clock: number, length: number): void {
  const last = runs[runs.length - 1];
  if (last && last.client === client && last.clock + last.length === clock) last.length += length;
  else runs.push({ client, clock, length });
}

/**
 * Rejects hunks together by the ids of what they inserted and removed, in one walk of the
 * text's items, deleted ones included: a removed character's tombstone says where it was.
 * Inserted characters still there are deleted; removed ones come back where their tombstone
 * is, unless one of these hunks, or one rejected before (`undone`), had inserted them. What
 * none of them wrote stays: a person's typing, another turn's text. Deleted characters have no
 * content left, so the text comes from the records.
 *
 * Text put back at a place goes after every tombstone there, so a tombstone that a hunk left
 * pending (`others`) still needs, among those put back, would lose its place: it is written
 * anew inside the text put back and deleted at once, and that hunk's `removed` points at the
 * new one. A character a pending hunk inserted that comes back (or is such a placeholder)
 * counts as its insertion.
 */
export function rejectByIds(doc: Y.Doc, text: Y.Text, hunks: readonly HunkIds[], undone: readonly IdRun[], others: readonly HunkIds[]): PendingUpdate[] {
  const updates: PendingUpdate[] = others.map(() => ({ restored: [], removed: null }));
  if (hunks.length === 0) return updates;
  const inserted = inRuns(hunks.flatMap((hunk) => hunk.inserted), -1);
  const gone = inRuns(undone, -1);
  const ownerOf = charMap(others.flatMap((hunk, owner) => hunk.inserted.map((run) => [run, () => owner] as [IdRun, () => number])));
  const toRestore = charMap(hunks.flatMap((hunk) => removedChars(hunk, (char) => char)));
  const stillRemoved = charMap(others.flatMap((hunk, owner) => removedChars(hunk, (char) => ({ char, owner }))));
  const neverBack = (client: number, clock: number) => inserted.get(client)?.has(clock) || gone.get(client)?.has(clock);

  const steps: Step[] = [];
  let index = 0;
  for (let item = text._start; item !== null; item = item.right) {
    const { client, clock: from } = item.id;
    if (!item.deleted) {
      if (!item.countable) continue;
      const mine = inserted.get(client);
      for (let i = 0; mine && i < item.length; i++) {
        if (!mine.has(from + i)) continue;
        const last = steps[steps.length - 1];
        if (last?.type === 'delete' && last.index + last.length === index + i) last.length++;
        else steps.push({ type: 'delete', index: index + i, length: 1 });
      }
      index += item.length;
      continue;
    }
    for (let i = 0; i < item.length; i++) {
      const clock = from + i;
      if (neverBack(client, clock)) continue;
      const back = toRestore.get(client)?.get(clock);
      const kept = back === undefined ? stillRemoved.get(client)?.get(clock) : undefined;
      if (back === undefined && kept === undefined) continue;
      let last = steps[steps.length - 1];
      if (last?.type !== 'insert' || last.index !== index) steps.push((last = { type: 'insert', index, pieces: [] }));
      // Written anew, a character a pending hunk inserted still counts as its insertion.
      const owner = ownerOf.get(client)?.get(clock) ?? -1;
      if (back !== undefined) {
        toRestore.get(client)!.delete(clock);
        last.pieces.push({ char: back, owner, placeholder: null });
      } else last.pieces.push({ char: kept!.char, owner, placeholder: { hunk: kept!.owner, client, clock } });
    }
  }

  const remap = others.map(() => new Map<string, [number, number]>());
  // Last first: each step's index counts the live characters before it, which later steps do not move.
  for (let s = steps.length - 1; s >= 0; s--) {
    const step = steps[s]!;
    if (step.type === 'delete') {
      text.delete(step.index, step.length);
      continue;
    }
    // Only tombstones: nothing comes back here, every one keeps its place.
    if (step.pieces.every((piece) => piece.placeholder)) continue;
    const clock = Y.getState(doc.store, doc.clientID);
    text.insert(step.index, step.pieces.map((piece) => piece.char).join(''));
    step.pieces.forEach((piece, i) => {
      if (piece.owner >= 0) pushRun(updates[piece.owner]!.restored, doc.clientID, clock + i, 1);
      if (piece.placeholder) remap[piece.placeholder.hunk]!.set(`${piece.placeholder.client}:${piece.placeholder.clock}`, [doc.clientID, clock + i]);
    });
    for (let i = step.pieces.length - 1; i >= 0; i--) if (step.pieces[i]!.placeholder) text.delete(step.index + i, 1);
  }
  remap.forEach((moved, owner) => {
    if (moved.size === 0) return;
    const removed: IdRun[] = [];
    for (const run of others[owner]!.removed) {
      for (let i = 0; i < run.length; i++) {
        const [client, clock] = moved.get(`${run.client}:${run.clock + i}`) ?? [run.client, run.clock + i];
        pushRun(removed, client, clock, 1);
      }
    }
    updates[owner]!.removed = removed;
  });
  return updates;
}
