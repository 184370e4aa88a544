import * as Y from 'yjs';

const FROM_ROOM = Symbol('from-room');

/**
 * The agent as its own Yjs peer of one room doc, connected in process (Hocuspocus's
 * DirectConnection, not a fake socket). It has its own client id, so every character it writes
 * is recognisably the agent's — hunks and reject rely on that — and its changes reach the room
 * doc (and so storage and every browser) as ordinary updates with this peer as origin.
 */
export class AgentPeer {
  readonly doc = new Y.Doc();

  constructor(
    private readonly room: Y.Doc,
    clientId: number,
  ) {
    this.doc.clientID = clientId;
    Y.applyUpdate(this.doc, Y.encodeStateAsUpdate(room), FROM_ROOM);
    room.on('update', this.fromRoom);
    this.doc.on('update', this.toRoom);
  }

  private readonly fromRoom = (update: Uint8Array, origin: unknown): void => {
    if (origin !== this) Y.applyUpdate(this.doc, update, FROM_ROOM);
  };

  private readonly toRoom = (update: Uint8Array, origin: unknown): void => {
    if (origin !== FROM_ROOM) Y.applyUpdate(this.room, update, this);
  };

  /** Runs `edit` as one transaction: one Yjs update, one broadcast, one row in storage. */
  transact(edit: () => void): void {
    this.doc.transact(edit);
  }

  destroy(): void {
    this.room.off('update', this.fromRoom);
    this.doc.off('update', this.toRoom);
    this.doc.destroy();
  }
}
