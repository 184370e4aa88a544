import { THREAD_FILE_OPS_KEY, type IndexEntry, type ThreadFileOp, type ThreadFileOpReview } from '@flint/protocol';
import type * as Y from 'yjs';
import { GATEWAY_ORIGIN } from '../LiveDoc';
import type { OpResult, Room } from '../Room';

type Result = { ok: true } | { ok: false; message: string };

/**
 * The file operations of the thread's turns — files created, renamed or moved, deleted — as
 * records in the thread doc, reviewable like hunks (issue 33, decision 0026). The agent's file
 * operations go through here: what it deletes leaves the tree but keeps its doc, so Reject can
 * bring it back with its text and change set.
 */
export class ThreadFileOps {
  private readonly ops: Y.Map<ThreadFileOp>;

  constructor(
    private readonly room: Room,
    threadDoc: Y.Doc,
  ) {
    this.ops = threadDoc.getMap<ThreadFileOp>(THREAD_FILE_OPS_KEY);
  }

  /** Creates an empty file for the turn, and records it. */
  create(turnId: string, path: string): { ok: true; fileId: string } | { ok: false; message: string } {
    const created = this.room.createFile(path);
    if (!created.ok || !created.fileId) return { ok: false, message: created.ok ? 'It could not be created.' : created.message };
    const at = this.room.pathOf(created.fileId) ?? path;
    this.record(turnId, { kind: 'create', path: at, entries: [[at, { kind: 'file', fileId: created.fileId }]] });
    return { ok: true, fileId: created.fileId };
  }

  rename(turnId: string, from: string, to: string): Result {
    const fileId = this.room.fileIdAt(from);
    const moved = this.room.apply({ type: 'file.rename', requestId: 0, from, to });
    if (!moved.ok) return moved;
    // The file it moved, so a review of that file finds it (a folder's rename is the turn's).
    this.record(turnId, { kind: 'rename', path: from, to, entries: fileId ? [[to, { kind: 'file', fileId }]] : [] });
    return { ok: true };
  }

  /**
   * Takes a file or folder out of the tree; its docs stay stored, so a reject can restore them.
   * (Nothing deletes them later yet: an accepted delete keeps its stored doc.)
   */
  remove(turnId: string, path: string): Result {
    const removed = this.room.removeKeepingDocs(path);
    if (!removed.ok) return removed;
    this.record(turnId, { kind: 'delete', path, entries: removed.entries });
    return { ok: true };
  }

  /**
   * Reviews one operation or all of a turn's pending ones. Reject reverses them last first and
   * stops at the first that cannot be reversed (a path taken since), which stays pending.
   * Undo takes a review back: a rejected operation is made again.
   */
  review(turnId: string, opId: string | undefined, action: ThreadFileOpReview): OpResult & { changed?: number } {
    const wanted = (op: ThreadFileOp) => op.turnId === turnId && (opId === undefined || op.opId === opId);
    const all = [...this.ops.values()].filter(wanted);
    if (all.length === 0) return opId === undefined ? { ok: true, changed: 0 } : { ok: false, code: 'not_found', message: 'That file operation is not in the thread.' };
    const chosen = all.filter((op) => (action === 'undo' ? op.status !== 'pending' : op.status === 'pending')).sort((a, b) => (action === 'accept' ? a.seq - b.seq : b.seq - a.seq));
    let changed = 0;
    for (const op of chosen) {
      if (action === 'reject' || (action === 'undo' && op.status === 'rejected')) {
        const done = action === 'reject' ? this.reverse(op) : this.redo(op);
        if (!done.ok) return done;
      }
      this.ops.doc!.transact(() => this.ops.set(op.opId, { ...op, status: action === 'accept' ? 'accepted' : action === 'reject' ? 'rejected' : 'pending' }), GATEWAY_ORIGIN);
      changed++;
    }
    return { ok: true, changed };
  }

  private reverse(op: ThreadFileOp): OpResult {
    switch (op.kind) {
      case 'create': {
        const at = this.currentPath(op.entries[0]);
        // Deleted since by someone else: nothing is left to take back.
        return at === null ? { ok: true } : this.room.removeKeepingDocs(at);
      }
      case 'rename':
        return this.room.apply({ type: 'file.rename', requestId: 0, from: op.to!, to: op.path });
      case 'delete':
        return this.room.restoreEntries(op.entries);
    }
  }

  private redo(op: ThreadFileOp): OpResult {
    switch (op.kind) {
      case 'create':
        return this.room.restoreEntries(op.entries);
      case 'rename':
        return this.room.apply({ type: 'file.rename', requestId: 0, from: op.path, to: op.to! });
      case 'delete':
        return this.room.removeKeepingDocs(op.path);
    }
  }

  private currentPath(entry: [string, IndexEntry] | undefined): string | null {
    if (!entry) return null;
    return entry[1].kind === 'file' ? this.room.pathOf(entry[1].fileId) : entry[0];
  }

  private record(turnId: string, fields: Pick<ThreadFileOp, 'kind' | 'path' | 'to' | 'entries'>): void {
    const seq = [...this.ops.values()].filter((op) => op.turnId === turnId).length;
    const op: ThreadFileOp = { opId: this.room.random.id('o'), turnId, status: 'pending', seq, ...fields };
    if (op.to === undefined) delete op.to;
    this.ops.doc!.transact(() => this.ops.set(op.opId, op), GATEWAY_ORIGIN);
  }
}
