import type { DocHandle } from '@flint/client';
import * as Y from 'yjs';
import { follow, usePresence, type Peer } from '../stores/presenceStore';
import { openFile, selectActivePath, useWorkspace } from '../stores/workspaceStore';
import type { ModelRegistry } from './ModelRegistry';
import type { monaco } from './monacoSetup';

/**
 * Following a peer: open the file they have active and keep their cursor in view. Moving your
 * own cursor (keyboard or mouse) stops following, as in VS Code Live Share and Zed.
 */
export class FollowController {
  private readonly disposers: Array<() => void> = [];
  private watched: DocHandle | null = null;

  constructor(
    private readonly editor: monaco.editor.IStandaloneCodeEditor,
    private readonly registry: ModelRegistry,
  ) {
    this.disposers.push(
      usePresence.subscribe((state, previous) => {
        if (state.following !== previous.following || state.peers !== previous.peers) this.goToPeer();
      }),
      useWorkspace.subscribe((state, previous) => {
        if (state.activeFileId !== previous.activeFileId || state.pathById !== previous.pathById) this.watchActiveFile();
        // Switching to a file the followed peer is not in (a tab, the tree) stops following.
        const peer = this.followedPeer();
        const path = selectActivePath(state);
        if (peer && state.activeFileId !== previous.activeFileId && path !== null && path !== peer.activeFile) follow(null);
      }),
    );
    const selection = editor.onDidChangeCursorSelection((event) => {
      if (event.source === 'keyboard' || event.source === 'mouse') {
        if (usePresence.getState().following !== null) follow(null);
      }
    });
    this.disposers.push(() => selection.dispose());
    this.watchActiveFile();
  }

  private followedPeer(): Peer | null {
    const { following, peers } = usePresence.getState();
    return following === null ? null : (peers.find((p) => p.clientId === following) ?? null);
  }

  private goToPeer(): void {
    const peer = this.followedPeer();
    if (!peer) return;
    if (peer.activeFile !== null && peer.activeFile !== selectActivePath(useWorkspace.getState())) {
      openFile(peer.activeFile);
    }
    this.revealPeerCursor();
  }

  private watchActiveFile(): void {
    const { activeFileId } = useWorkspace.getState();
    const handle = activeFileId === null ? null : this.registry.handleFor(activeFileId);
    if (handle === this.watched) return;
    this.watched?.awareness.off('change', this.revealPeerCursor);
    this.watched = handle;
    handle?.awareness.on('change', this.revealPeerCursor);
  }

  private readonly revealPeerCursor = (): void => {
    const peer = this.followedPeer();
    const handle = this.watched;
    const model = this.editor.getModel();
    if (!peer || !handle || !model) return;
    for (const [clientId, state] of handle.awareness.getStates()) {
      const user = state.user as { id?: unknown } | undefined;
      if (clientId === handle.doc.clientID || user?.id !== peer.user.id) continue;
      const selection = state.selection as { head?: unknown } | null | undefined;
      if (!selection?.head) return;
      const head = Y.createAbsolutePositionFromRelativePosition(
        Y.createRelativePositionFromJSON(selection.head),
        handle.doc,
      );
      if (!head) return;
      const position = model.getPositionAt(head.index);
      this.editor.revealPositionInCenterIfOutsideViewport(position);
      return;
    }
  };

  dispose(): void {
    this.watched?.awareness.off('change', this.revealPeerCursor);
    for (const dispose of this.disposers) dispose();
  }
}
