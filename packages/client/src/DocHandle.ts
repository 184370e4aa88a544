import * as awarenessProtocol from 'y-protocols/awareness';
import * as Y from 'yjs';

/**
 * A document the client has open: its Y.Doc and its awareness (cursors, names). The client
 * keeps both across reconnects, so edits made offline are sent when the socket is back.
 */
export class DocHandle {
  readonly doc = new Y.Doc();
  readonly awareness = new awarenessProtocol.Awareness(this.doc);
  /** True once the gateway's state has been applied at least once. */
  synced = false;
  private readonly syncedListeners = new Set<() => void>();

  constructor(readonly docId: string) {}

  whenSynced(): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve) => this.syncedListeners.add(resolve));
  }

  markSynced(): void {
    if (this.synced) return;
    this.synced = true;
    for (const listener of this.syncedListeners) listener();
    this.syncedListeners.clear();
  }

  destroy(): void {
    this.awareness.destroy();
    this.doc.destroy();
  }
}
