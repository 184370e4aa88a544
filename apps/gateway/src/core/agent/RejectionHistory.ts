import { hunksOf, type HunkRecord } from '@flint/change-set';
import type * as Y from 'yjs';

/** How many earlier turns' rejections a prompt mentions. */
const rememberedTurns = 5;

/**
 * What the model should hear about earlier turns in one file: the changes people rejected,
 * by turn. Kept up to date from the hunk records' own changes (local or remote), so a prompt
 * reads the few turns that had rejections instead of every record the file ever had — reading
 * them all took ~120 µs of each prompt after 300 turns, and grew with every turn.
 */
export class RejectionHistory {
  /** turnId → its rejected hunks (hunkId → the record), in order of the turn's first rejection. */
  private readonly rejectedByTurn = new Map<string, Map<string, HunkRecord>>();
  /** hunkId → its turn, for the rejected hunks only. */
  private readonly turnOfHunk = new Map<string, string>();

  constructor(doc: Y.Doc) {
    const records = hunksOf(doc);
    for (const [hunkId, record] of records) this.update(hunkId, record);
    records.observe((event) => {
      for (const hunkId of event.keysChanged) this.update(hunkId, records.get(hunkId));
    });
  }

  /** One note per recent turn with rejections, oldest first. */
  notes(): string[] {
    return [...this.rejectedByTurn.values()].slice(-rememberedTurns).map((hunks) => {
      const original = [...hunks.values()]
        .sort((a, b) => a.seq - b.seq)
        .map((record) => record.original)
        .join('');
      const example = original ? ` (e.g. ${JSON.stringify(original.slice(0, 200))})` : '';
      return `Note: in an earlier turn the user rejected ${hunks.size} of your changes and kept the original text${example}. Do not make that change again.`;
    });
  }

  private update(hunkId: string, record: HunkRecord | undefined): void {
    const turnId = this.turnOfHunk.get(hunkId);
    if (turnId !== undefined) {
      this.turnOfHunk.delete(hunkId);
      const hunks = this.rejectedByTurn.get(turnId)!;
      hunks.delete(hunkId);
      if (hunks.size === 0) this.rejectedByTurn.delete(turnId);
    }
    if (record?.status !== 'rejected') return;
    let hunks = this.rejectedByTurn.get(record.turnId);
    if (!hunks) this.rejectedByTurn.set(record.turnId, (hunks = new Map()));
    hunks.set(hunkId, record);
    this.turnOfHunk.set(hunkId, record.turnId);
  }
}
