import type * as Y from 'yjs';

/**
 * The agent as its own Yjs peer of one room doc. It has its own client id, so every character
 * it writes is recognisably the agent's — hunks and reject rely on that — and its changes are
 * ordinary updates of the room doc with this peer as origin (storage and every browser get them
 * like any collaborator's).
 *
 * It writes into the room doc itself, under its client id for the length of its transaction,
 * rather than into a synced copy: a copy cost a full encode/apply of the doc per prompt (time to
 * first token grew with the file's history) and a second integration of every update in both
 * directions while the turn ran. Yjs reads `doc.clientID` for each item it creates, so items made
 * inside `transact` are the agent's; the doc's own id is back before observers run.
 */
export class AgentPeer {
  constructor(
    readonly doc: Y.Doc,
    readonly clientId: number,
  ) {}

  /** The doc's own client id while `transact` runs (the agent's id is swapped in meanwhile). */
  private docClientId: number | null = null;

  /** Runs `edit` as one transaction: one Yjs update, one broadcast, one row in storage. */
  transact(edit: () => void): void {
    this.doc.transact(() => {
      const own = this.doc.clientID;
      this.docClientId = own;
      this.doc.clientID = this.clientId;
      try {
        edit();
      } finally {
        this.doc.clientID = own;
        this.docClientId = null;
      }
    }, this);
  }

  /**
   * Inside `transact`: runs `write` under the doc's own client id. For bookkeeping written with
   * the text (hunk records): under the agent's id it would take a clock between two flushes'
   * inserts, and Yjs merges consecutive inserts into one item only when their clocks are
   * contiguous — every flush would leave its own item in the text for good, and every walk of
   * the text (review, cursors) would grow with the number of flushes ever made. (The applier
   * still breaks a run every few KB: see `maxMergedChars`.)
   */
  asDoc(write: () => void): void {
    const own = this.docClientId;
    if (own === null) throw new Error('AgentPeer.asDoc is only for use inside transact');
    this.doc.clientID = own;
    try {
      write();
    } finally {
      this.doc.clientID = this.clientId;
    }
  }
}
