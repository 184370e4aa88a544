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

  /** Runs `edit` as one transaction: one Yjs update, one broadcast, one row in storage. */
  transact(edit: () => void): void {
    this.doc.transact(() => {
      const own = this.doc.clientID;
      this.doc.clientID = this.clientId;
      try {
        edit();
      } finally {
        this.doc.clientID = own;
      }
    }, this);
  }
}
