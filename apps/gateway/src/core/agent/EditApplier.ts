import { hunksOf, idRunsOf, liveRanges, deleteRanges, splitRuns, type HunkRecord, type IdRun } from '@flint/change-set';
import { FILE_TEXT_KEY } from '@flint/protocol';
import type { DiffOp } from '@flint/stream-diff';
import * as Y from 'yjs';
import type { AgentPeer } from './AgentPeer';

/** Keeps up to this long, within a line, between two changes, join the surrounding hunk. */
const maxAbsorbedKeep = 40;

interface OpenHunk {
  id: string;
  record: HunkRecord;
  original: string[];
  /** The ids of the characters in `original`, in order. */
  removed: IdRun[];
}

/**
 * Applies stream-diff ops (against the original region) to the live document as the agent
 * peer. It follows the original characters by Yjs id, not by index, so people typing anywhere
 * (inside the region included) shift nothing: deletes remove only original characters that
 * still exist, inserts land just before the next original character. Each run of non-keep ops
 * becomes a hunk in the doc's change set.
 */
export class EditApplier {
  private readonly text: Y.Text;
  private remaining: IdRun[];
  /** Offset into the original of the next character the ops will reach. */
  private cursor = 0;
  /** The first character after the region, when the region does not end the text. */
  private readonly afterRegion: Y.RelativePosition | null;
  /**
   * At the end of the text there is no character to insert before, and a position glued to the
   * last character would put each insert before the previous one: follow the last character
   * written (kept or inserted) instead.
   */
  private lastWritten: { client: number; clock: number } | null;
  private open: OpenHunk | null = null;
  /** Characters of a short in-line keep not applied yet (see `keep`). */
  private heldKeep = 0;
  readonly hunkIds: string[] = [];
  /** Some of its hunks are marked as being written (see `finish`). */
  private writing = false;

  /**
   * `seq` numbers the turn's hunks in this doc (ids and their order): the agent thread shares
   * one counter among the appliers of a turn's hunks in the same file. An id already in the
   * doc's change set is never taken again, whatever the counter says: a record overwritten
   * would take its hunk out of review.
   */
  constructor(
    private readonly peer: AgentPeer,
    private readonly turnId: string,
    private readonly original: string,
    start: number,
    private readonly seq: { next: number } = { next: 0 },
  ) {
    this.text = peer.doc.getText(FILE_TEXT_KEY);
    const end = start + original.length;
    this.remaining = idRunsOf(this.text, start, end);
    this.afterRegion = end < this.text.length ? Y.createRelativePositionFromTypeIndex(this.text, end) : null;
    const before = start > 0 ? idRunsOf(this.text, start - 1, start)[0] : undefined;
    this.lastWritten = before ? { client: before.client, clock: before.clock } : null;
  }

  /** Applies one flush worth of ops in one transaction. */
  apply(ops: readonly DiffOp[]): void {
    if (ops.length === 0) return;
    this.peer.transact(() => {
      for (const op of ops) {
        if (op.type === 'keep') this.keep(op.length);
        else {
          this.absorbHeldKeep();
          if (op.type === 'delete') this.delete(op.length);
          else this.insert(op.text);
        }
      }
      if (this.open) this.writeHunk(this.open);
    });
  }

  /**
   * A short keep inside a line, between two changes, would split one line's rewrite into
   * word-sized hunks. It is held (a keep changes no text, so holding it shows nothing late):
   * if the line changes again it becomes part of the hunk, else it is applied as a keep.
   */
  private keep(length: number): void {
    if (this.open) {
      const held = this.original.slice(this.cursor, this.cursor + this.heldKeep + length);
      if (!held.includes('\n') && held.length <= maxAbsorbedKeep) {
        this.heldKeep += length;
        return;
      }
    }
    this.applyKeep(this.heldKeep + length);
    this.heldKeep = 0;
  }

  private applyKeep(length: number): void {
    this.closeHunk();
    const [kept, rest] = splitRuns(this.remaining, length);
    const last = kept[kept.length - 1];
    if (last) this.lastWritten = { client: last.client, clock: last.clock + last.length - 1 };
    this.remaining = rest;
    this.cursor += length;
  }

  /** The held keep becomes a rewrite of the same text, inside the open hunk. */
  private absorbHeldKeep(): void {
    if (this.heldKeep === 0) return;
    const text = this.original.slice(this.cursor, this.cursor + this.heldKeep);
    this.heldKeep = 0;
    this.delete(text.length);
    this.insert(text);
  }

  private delete(length: number): void {
    const hunk = this.openHunk();
    const [gone, rest] = splitRuns(this.remaining, length);
    deleteRanges(this.text, liveRanges(this.text, gone));
    hunk.original.push(this.original.slice(this.cursor, this.cursor + length));
    for (const run of gone) {
      const last = hunk.removed[hunk.removed.length - 1];
      if (last && last.client === run.client && last.clock + last.length === run.clock) last.length += run.length;
      else hunk.removed.push({ ...run });
    }
    this.remaining = rest;
    this.cursor += length;
  }

  private insert(text: string): void {
    this.openHunk();
    this.text.insert(this.insertionIndex(), text);
    this.lastWritten = { client: this.peer.clientId, clock: this.clock() - 1 };
  }

  /**
   * Ends the edit: closes the open hunk, and its hunks can be reviewed from now on. The
   * original the ops did not reach stays.
   */
  finish(): void {
    if (!this.writing && this.heldKeep === 0) return;
    this.writing = false;
    this.peer.transact(() => {
      if (this.heldKeep > 0) this.applyKeep(this.heldKeep);
      this.heldKeep = 0;
      this.closeHunk();
      const map = hunksOf(this.peer.doc);
      this.peer.bookkeeping(() => {
        for (const id of this.hunkIds) {
          const record = map.get(id);
          if (!record?.writing) continue;
          const { writing: _writing, ...done } = record;
          map.set(id, done);
        }
      });
    });
  }

  /** Where the agent's caret is: just before the next original character. */
  insertionIndex(): number {
    return Y.createAbsolutePositionFromRelativePosition(Y.createRelativePositionFromJSON(this.restoreAt()), this.peer.doc)?.index ?? this.text.length;
  }

  /**
   * The caret as a relative position (JSON), for the agent's cursor: taken from the ids the
   * applier follows, without resolving it to an index and back (two walks of the text per flush).
   */
  caret(): Record<string, unknown> {
    return this.restoreAt();
  }

  /** Where the next insert goes, and where a hunk's original goes back on reject. */
  private restoreAt(): Record<string, unknown> {
    const next = this.remaining[0];
    if (next) return { item: { client: next.client, clock: next.clock }, assoc: 0 };
    if (this.afterRegion) return Y.relativePositionToJSON(this.afterRegion) as Record<string, unknown>;
    if (this.lastWritten) return { item: this.lastWritten, assoc: -1 };
    return { tname: FILE_TEXT_KEY, assoc: -1 };
  }

  private clock(): number {
    return Y.getState(this.peer.doc.store, this.peer.clientId);
  }

  private openHunk(): OpenHunk {
    if (this.open) return this.open;
    const taken = hunksOf(this.peer.doc);
    while (taken.has(`${this.turnId}.${this.seq.next}`)) this.seq.next++;
    const id = `${this.turnId}.${this.seq.next}`;
    this.open = {
      id,
      original: [],
      removed: [],
      record: {
        turnId: this.turnId,
        agentClient: this.peer.clientId,
        insertedFrom: this.clock(),
        insertedTo: this.clock(),
        original: '',
        restoreAt: this.restoreAt(),
        status: 'pending',
        seq: this.seq.next++,
        writing: true,
      },
    };
    this.hunkIds.push(id);
    this.writing = true;
    return this.open;
  }

  private writeHunk(hunk: OpenHunk): void {
    hunk.record = { ...hunk.record, insertedTo: this.clock(), original: hunk.original.join(''), removed: hunk.removed.map((run) => ({ ...run })), restoreAt: this.restoreAt() };
    const record = hunk.record;
    this.peer.bookkeeping(() => hunksOf(this.peer.doc).set(hunk.id, record));
  }

  private closeHunk(): void {
    if (!this.open) return;
    this.writeHunk(this.open);
    this.open = null;
  }
}
