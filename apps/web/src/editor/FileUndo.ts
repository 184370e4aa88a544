import { hunksOf, liveRanges, type HunkRecord, type IdRun } from '@flint/change-set';
import { REVIEW_ORIGIN } from '@flint/client';
import * as Y from 'yjs';

/** Typing within this long is one undo step, as in Monaco's own stack. */
const captureTimeoutMs = 500;
/** Re-pointing hunks after an undo is bookkeeping, not a step of its own: never tracked. */
const REPOINT_ORIGIN = Symbol('flint-undo-repoint');

/**
 * Undo and redo for one file, on its Y.Doc rather than Monaco's stack: y-monaco applies remote
 * edits with `applyEdits`, which Monaco's stack does not know about, so its undo would rewind
 * other people's text. This undoes only what this tab did — its typing (the y-monaco binding's
 * transactions) and its reviews (REVIEW_ORIGIN) — and leaves collaborators and the agent alone.
 *
 * The scope includes the change set's hunk map, so undoing an accept or reject also puts the
 * hunk back to pending. A review is always a step of its own, never merged with typing.
 *
 * Undoing a reject brings the agent's text back, but Yjs re-creates undone text under this
 * tab's client id, while a hunk finds its text by the agent's ids. After each undo and redo,
 * hunks whose text was re-created are pointed at the new ids (Yjs links them with `redone`),
 * so the hunk is highlighted and reviewable again, and a second reject removes it. Map
 * changes may overwrite others' (`ignoreRemoteMapChanges`): redo must restore a hunk's status
 * over that re-pointing, and nobody else writes a reviewed hunk's record.
 */
export class FileUndo {
  private readonly manager: Y.UndoManager;
  private lastCaret: number | null = null;

  constructor(
    private readonly doc: Y.Doc,
    private readonly text: Y.Text,
  ) {
    this.manager = new Y.UndoManager([text, hunksOf(doc)], {
      trackedOrigins: new Set<unknown>([REVIEW_ORIGIN]),
      captureTimeout: captureTimeoutMs,
      ignoreRemoteMapChanges: true,
    });
    doc.on('beforeTransaction', this.beforeTransaction);
    this.manager.on('stack-item-added', this.onAdded);
    this.manager.on('stack-item-popped', this.onPopped);
  }

  /** Tracks an origin whose transactions are this tab's edits (a y-monaco binding). */
  track(origin: unknown): void {
    this.manager.addTrackedOrigin(origin);
  }

  untrack(origin: unknown): void {
    this.manager.removeTrackedOrigin(origin);
  }

  /** Undoes the last step; returns the text index the caret should move to, if the text changed. */
  undo(): number | null {
    return this.pop(() => this.manager.undo());
  }

  redo(): number | null {
    return this.pop(() => this.manager.redo());
  }

  canUndo(): boolean {
    return this.manager.canUndo();
  }

  canRedo(): boolean {
    return this.manager.canRedo();
  }

  private pop(run: () => unknown): number | null {
    this.lastCaret = null;
    if (run() !== null) this.repointRedoneHunks();
    return this.lastCaret;
  }

  private repointRedoneHunks(): void {
    const map = hunksOf(this.doc);
    const moved: Array<[string, HunkRecord]> = [];
    for (const [hunkId, record] of map) {
      if (record.status !== 'pending' || record.insertedTo <= record.insertedFrom) continue;
      const run = { client: record.agentClient, clock: record.insertedFrom, length: record.insertedTo - record.insertedFrom };
      if (liveRanges(this.text, [run]).length > 0) continue;
      const redone = redoneRun(this.doc, this.text, run);
      if (redone) moved.push([hunkId, { ...record, agentClient: redone.client, insertedFrom: redone.clock, insertedTo: redone.clock + redone.length }]);
    }
    if (moved.length === 0) return;
    this.doc.transact(() => {
      for (const [hunkId, record] of moved) map.set(hunkId, record);
    }, REPOINT_ORIGIN);
  }

  /** Cuts the capture window before a review, so it does not join the typing just before it. */
  private readonly beforeTransaction = (transaction: Y.Transaction): void => {
    if (transaction.origin === REVIEW_ORIGIN) this.manager.stopCapturing();
  };

  /** ...and after it, so the typing just after does not join the review either. */
  private readonly onAdded = (event: { origin: unknown }): void => {
    if (event.origin === REVIEW_ORIGIN) this.manager.stopCapturing();
  };

  private readonly onPopped = (event: { changedParentTypes: Map<Y.AbstractType<Y.YEvent<any>>, Array<Y.YEvent<any>>> }): void => {
    const first = event.changedParentTypes.get(this.text as unknown as Y.AbstractType<Y.YEvent<any>>)?.[0];
    if (first) this.lastCaret = caretAfter(first.delta);
  };

  destroy(): void {
    this.doc.off('beforeTransaction', this.beforeTransaction);
    this.manager.destroy();
  }
}

/** Where the caret goes after a change: the end of its first insert, or where its first delete was. */
export function caretAfter(delta: ReadonlyArray<{ retain?: number; insert?: unknown; delete?: number }>): number | null {
  let index = 0;
  for (const op of delta) {
    if (op.retain !== undefined) index += op.retain;
    else if (typeof op.insert === 'string') return index + op.insert.length;
    else if (op.delete !== undefined) return index;
  }
  return null;
}

/**
 * Where the text characters of `run` live now that an undo or redo re-created them: one run of
 * ids, or null when they were not re-created (a person deleted them) or came back scattered.
 * Other items in the range (the hunk's own earlier records) are skipped.
 */
function redoneRun(doc: Y.Doc, text: Y.Text, run: IdRun): IdRun | null {
  let result: IdRun | null = null;
  for (let clock = run.clock; clock < run.clock + run.length; ) {
    const item = Y.getItem(doc.store, Y.createID(run.client, clock));
    const end = Math.min(item.id.clock + item.length, run.clock + run.length);
    if ((item.parent as unknown) === text) {
      const target = followRedone(doc, item, clock - item.id.clock);
      if (!target) return null;
      const length = end - clock;
      if (result === null) result = { ...target, length };
      else if (target.client === result.client && target.clock === result.clock + result.length) result.length += length;
      else return null;
    }
    clock = end;
  }
  return result;
}

/** The live id that the character at `offset` in `item` was last re-created as, if any. */
function followRedone(doc: Y.Doc, item: Y.Item, offset: number): { client: number; clock: number } | null {
  let current = item;
  let at = offset;
  while (current.deleted) {
    if (current.redone === null) return null;
    const next = Y.getItem(doc.store, Y.createID(current.redone.client, current.redone.clock + at));
    at = current.redone.clock + at - next.id.clock;
    current = next;
  }
  return current === item ? null : { client: current.id.client, clock: current.id.clock + at };
}
