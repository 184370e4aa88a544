import * as Y from 'yjs';

/**
 * Characters of the agent's text that Yjs may merge into one item. Merging keeps the text from
 * fragmenting into an item per flush, but every update that ends inside an item re-encodes it
 * from there, and V8 first copies the whole merged string flat: a turn's cost would grow with the
 * square of its length, on the gateway and in every browser.
 */
const maxMergedChars = 4096;

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
 * inside `transact` are the agent's; the doc's own id is back before observers run. One peer
 * (one client id) serves every turn in a loaded doc (decision 0008).
 */
export class AgentPeer {
  /** The doc's own client id while `transact` runs (the agent's id is swapped in meanwhile). */
  private docClientId: number | null = null;

  /** The agent's clock where its current run of text began (see `maxMergedChars`). */
  private runStart = 0;

  constructor(
    readonly doc: Y.Doc,
    readonly clientId: number,
  ) {}

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
   * Inside `transact`: runs `write`, bookkeeping that goes with the text (hunk records), under
   * the doc's own client id. Under the agent's id it would take a clock between two flushes'
   * inserts, and Yjs merges consecutive inserts into one item only when their clocks are
   * contiguous — every flush would leave its own item in the text for good, and every walk of the
   * text (review, cursors) would grow with the number of flushes ever made. Past
   * `maxMergedChars` since the last break (across turns: this peer is the doc's for as long as
   * it is loaded), it runs under the agent's id once, and that clock starts a new item.
   */
  bookkeeping(write: () => void): void {
    const own = this.docClientId;
    if (own === null) throw new Error('AgentPeer.bookkeeping is only for use inside transact');
    // Only the agent's text advances its clock between breaks: the clock is the run's length.
    if (Y.getState(this.doc.store, this.clientId) - this.runStart >= maxMergedChars) {
      write();
      this.runStart = Y.getState(this.doc.store, this.clientId);
      return;
    }
    this.doc.clientID = own;
    try {
      write();
    } finally {
      this.doc.clientID = this.clientId;
    }
  }
}
