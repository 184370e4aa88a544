import * as Y from 'yjs';
import { deleteRanges, indexOf, liveRanges, type IdRun, type TextRange } from './idRanges';
import { rejectByIds } from './rejectByIds';

/** Name of the Y.Map in a file's doc that holds its change sets' hunks: hunkId → HunkRecord. */
export const HUNKS_KEY = 'flint.hunks';

export type HunkStatus = 'pending' | 'accepted' | 'rejected';

/**
 * One contiguous change the agent made: the characters it inserted (a clock range of the
 * turn's own Yjs client, so they are found wherever they moved) and the original text it
 * removed, with where to put that text back.
 */
export interface HunkRecord {
  turnId: string;
  /** The Yjs client id the agent wrote this turn with (one per turn). */
  agentClient: number;
  /** Clock range [insertedFrom, insertedTo) of the agent's inserts for this hunk. */
  insertedFrom: number;
  insertedTo: number;
  /** The original text this hunk removed ('' for a pure insertion). */
  original: string;
  /** Where the original goes back on reject: JSON of a Yjs relative position. */
  restoreAt: Record<string, unknown>;
  status: HunkStatus;
  /** Order of hunks within the turn, in the file; never reused within it. */
  seq: number;
  /**
   * The Yjs ids of the characters `original` holds, in order (absent in records written before
   * issue 33). Reject puts the text back where those characters were, and leaves out the ones
   * another hunk rejected with it had inserted: rejecting a later patch that rewrote this
   * hunk's lines, together with this hunk, gives back the text before both.
   */
  removed?: IdRun[];
  /**
   * Text a reject of a later hunk put back where this hunk's inserted characters were: it counts
   * as this hunk's own, so rejecting this hunk afterwards removes it too.
   */
  restored?: IdRun[];
  /** The agent is still writing this hunk: nobody can accept or reject it yet. */
  writing?: boolean;
}

const statuses: ReadonlySet<unknown> = new Set<HunkStatus>(['pending', 'accepted', 'rejected']);
const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;
const isRuns = (value: unknown): boolean =>
  Array.isArray(value) &&
  value.every((run: { client?: unknown; clock?: unknown; length?: unknown } | null) => typeof run === 'object' && run !== null && isCount(run.client) && isCount(run.clock) && isCount(run.length));
const runsLength = (runs: readonly IdRun[]) => runs.reduce((n, run) => n + run.length, 0);
const isId = (value: unknown): boolean => {
  const id = value as { client?: unknown; clock?: unknown } | null;
  return typeof id === 'object' && id !== null && isCount(id.client) && isCount(id.clock);
};

/**
 * Whether a value is a Yjs relative position as JSON (`Y.relativePositionToJSON`, or the object
 * itself after a JSON round trip). Yjs resolves these without checking them: a clock that is
 * not a number sends its search astray, so anything a peer sends is checked first.
 */
export function isRelativePositionJson(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const at = value as { type?: unknown; tname?: unknown; item?: unknown; assoc?: unknown };
  return (
    (at.type === undefined || at.type === null || isId(at.type)) &&
    (at.item === undefined || at.item === null || isId(at.item)) &&
    (at.tname === undefined || at.tname === null || typeof at.tname === 'string') &&
    (at.assoc === undefined || at.assoc === null || Number.isSafeInteger(at.assoc)) &&
    // Yjs resolves a position by its item, or else its type (by id, or a root's name): one with
    // none of them makes it throw for whoever reads it (a reject, for everyone).
    (isId(at.item) || isId(at.type) || typeof at.tname === 'string')
  );
}

/**
 * Whether a value read from a doc is a well-formed hunk record. Any editor writes these (a
 * review is a document edit), so the gateway checks every one before it reaches anybody else.
 */
export function isHunkRecord(value: unknown): value is HunkRecord {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const r = value as Partial<Record<keyof HunkRecord, unknown>>;
  return (
    typeof r.turnId === 'string' && r.turnId.length <= 128 &&
    isCount(r.agentClient) && isCount(r.insertedFrom) && isCount(r.insertedTo) &&
    (r.insertedFrom as number) <= (r.insertedTo as number) &&
    typeof r.original === 'string' &&
    statuses.has(r.status) && isCount(r.seq) &&
    isRelativePositionJson(r.restoreAt) &&
    (r.removed === undefined || (isRuns(r.removed) && runsLength(r.removed as IdRun[]) === (r.original as string).length)) &&
    (r.restored === undefined || isRuns(r.restored)) &&
    (r.writing === undefined || typeof r.writing === 'boolean')
  );
}

export function hunksOf(doc: Y.Doc): Y.Map<HunkRecord> {
  return doc.getMap<HunkRecord>(HUNKS_KEY);
}

/** How a hunk looks in the document now: where its inserted text is, where its removal was. */
export interface HunkView {
  hunkId: string;
  record: HunkRecord;
  inserted: TextRange[];
  /** Index at which the removed original would be shown (and restored). */
  removedAt: number | null;
}

export function viewHunks(doc: Y.Doc, text: Y.Text, filter: (record: HunkRecord) => boolean = (r) => r.status === 'pending'): HunkView[] {
  const views: HunkView[] = [];
  for (const [hunkId, record] of hunksOf(doc)) {
    if (!filter(record)) continue;
    views.push({
      hunkId,
      record,
      inserted: liveRanges(text, insertedRuns(record)),
      removedAt: record.original ? indexOf(doc, Y.createRelativePositionFromJSON(record.restoreAt)) : null,
    });
  }
  return views.sort((a, b) => (a.record.turnId === b.record.turnId ? a.record.seq - b.record.seq : a.record.turnId < b.record.turnId ? -1 : 1));
}

/** The characters that count as the hunk's insertions: the agent's, and any text a reject put back for them. */
export const insertedRuns = (record: HunkRecord): IdRun[] => [
  { client: record.agentClient, clock: record.insertedFrom, length: record.insertedTo - record.insertedFrom },
  ...(record.restored ?? []),
];

export type ReviewAction = 'accept' | 'reject';

/**
 * Accepts or rejects hunks, in one transaction (one undo step). Reject deletes the characters
 * the agent inserted that still exist and puts the original back where it was; characters a
 * person typed inside the hunk stay. Hunks rejected together are undone together: text one of
 * them removed that another of them had inserted is not put back. Already reviewed hunks, and
 * hunks the agent is still writing, are left as they are.
 * @returns how many hunks changed status.
 */
export function reviewHunks(
  doc: Y.Doc,
  text: Y.Text,
  select: (hunkId: string, record: HunkRecord) => boolean,
  action: ReviewAction,
  origin: unknown = null,
): number {
  const map = hunksOf(doc);
  const chosen = [...map].filter(([id, record]) => record.status === 'pending' && !record.writing && select(id, record));
  if (chosen.length === 0) return 0;
  doc.transact(() => {
    if (action === 'reject') rejectChosen(doc, text, map, chosen);
    const status: HunkStatus = action === 'accept' ? 'accepted' : 'rejected';
    for (const [id, record] of chosen) map.set(id, { ...(map.get(id) ?? record), status });
  }, origin);
  return chosen.length;
}

function rejectChosen(doc: Y.Doc, text: Y.Text, map: Y.Map<HunkRecord>, chosen: Array<[string, HunkRecord]>): void {
  const chosenIds = new Set(chosen.map(([id]) => id));
  const others = [...map].filter(([id, record]) => record.status === 'pending' && !chosenIds.has(id));
  const idsOf = (record: HunkRecord) => ({ inserted: insertedRuns(record), removed: record.removed ?? [], original: record.original });
  const updates = rejectByIds(
    doc,
    text,
    chosen.filter(([, record]) => record.removed !== undefined).map(([, record]) => idsOf(record)),
    [...map.values()].filter((record) => record.status === 'rejected').flatMap(insertedRuns),
    others.map(([, record]) => idsOf(record)),
  );
  updates.forEach(({ restored, removed }, i) => {
    if (restored.length === 0 && removed === null) return;
    const [id, record] = others[i]!;
    const next: HunkRecord = { ...record };
    if (restored.length) next.restored = [...(record.restored ?? []), ...restored];
    if (removed) next.removed = removed;
    map.set(id, next);
  });
  // Records from before issue 33 know only where their original went: last hunk first, so
  // restoring one original cannot shift the next one's positions.
  const legacy = chosen.filter(([, record]) => record.removed === undefined).sort((a, b) => b[1].seq - a[1].seq);
  for (const [, record] of legacy) {
    deleteRanges(text, liveRanges(text, insertedRuns(record)));
    if (record.original) {
      const at = indexOf(doc, Y.createRelativePositionFromJSON(record.restoreAt));
      text.insert(at ?? text.length, record.original);
    }
  }
}

/**
 * Ends `writing` on a turn's hunks: the turn is over though its writer never said so (the
 * gateway that ran it stopped mid-hunk), and its hunks must not stay unreviewable.
 * @returns how many hunks it ended.
 */
export function endWriting(doc: Y.Doc, turnId: string, origin: unknown = null): number {
  const map = hunksOf(doc);
  const open = [...map].filter(([, record]) => record.turnId === turnId && record.writing);
  if (open.length === 0) return 0;
  doc.transact(() => {
    for (const [id, record] of open) {
      const { writing: _writing, ...done } = record;
      map.set(id, done);
    }
  }, origin);
  return open.length;
}

/**
 * The text as it would read were these hunks rejected now, without touching the document: the
 * reject runs on a private copy, so it is exactly what Reject would leave (people's typing
 * inside a hunk stays). Costs a copy of the doc; for occasional questions, not per frame.
 */
export function textWithRejected(doc: Y.Doc, textKey: string, select: (hunkId: string, record: HunkRecord) => boolean = () => true): string {
  const copy = new Y.Doc();
  try {
    Y.applyUpdate(copy, Y.encodeStateAsUpdate(doc));
    const text = copy.getText(textKey);
    reviewHunks(copy, text, select, 'reject');
    return text.toString();
  } finally {
    copy.destroy();
  }
}
