import { FILE_TEXT_KEY, normalizePath, validatePath, type IndexEntry, type UnsyncedReason } from '@flint/protocol';
import type * as Y from 'yjs';
import type { Log } from '../core/ports/Log';
import { GATEWAY_ORIGIN, type LiveDoc } from '../core/LiveDoc';
import type { DocSource, Room } from '../core/Room';
import type { Disk, DiskEvent } from '../core/ports/Disk';
import { contentDigest, inGitFolder } from './NodeDisk';
import { DeleteWindow } from './DeleteWindow';
import { DiskSpelling } from './DiskSpelling';
import { applyText, decodeText, encodeLike, encodeText, isText, maxSyncedTextBytes, maxTextBytes, mergeText, type TextFormat } from './fileText';
import type { FolderProject, WrittenFile } from './FolderProject';
import { renamedFrom, type DeletedFile } from './renamePairing';

/** Where the last synced text of each file is kept, so a restart can tell who changed what. */
export interface SyncBases {
  get(key: string): string | null;
  set(key: string, value: string): void;
}

export interface FolderSyncOptions {
  workspaceId: string;
  /** The workspace's room, held loaded for as long as the sync runs. */
  room: Room;
  disk: Disk & { root: string };
  bases: SyncBases;
  log: Log;
  /** A document's changes reach the disk this long after they stop (default 100 ms). */
  writeDelayMs?: number;
  /**
   * A file deleted on disk is taken out of the workspace this long after, unless a create
   * pairs with it first (default 100 ms): a rename, `git mv` or `git checkout -- f` reaches the
   * watcher as a delete and a create, not always in one batch.
   */
  renameWindowMs?: number;
  /**
   * Whether `bytes` more from the disk may enter the workspace: a new file, or a document
   * growing (a working copy's files count against the workspace's storage quota). Refused, the
   * file stays on disk only; what the workspace holds is unchanged. Unset: everything enters.
   */
  admit?(path: string, bytes: number): boolean;
}

/** Files an upload creates per change of the tree. */
const uploadBatchFiles = 50;
/** New files read at once when a folder is listed (to tell text from binary; issue 36). */
const listingReadBatch = 64;

type FreshFile = { path: string; text?: string; binaryBytes?: number; format?: TextFormat; digest?: string };

/** A new file's neighbours are checked for a delete the watcher folded away in folders this small. */
const maxNeighboursChecked = 64;

/** The origin of changes the disk brings into documents and the tree (not written back). */
export const DISK_ORIGIN = Symbol('flint-disk');

interface Synced {
  /** The text disk and document last agreed on. */
  base: string;
  format: TextFormat;
  mode: number | undefined;
  /** What the disk held then (`contentDigest`; null: no file): a write replaces only that. */
  digest: string | null;
  /**
   * Made empty because its file had gone when it was first opened (moved or deleted, the
   * watcher's event not taken in yet): what the disk shows next is added to what was typed, not
   * merged against an empty base (where the document would win, and the disk's text be lost).
   */
  provisional?: true;
}

/**
 * A folder as one more peer of a workspace (DESIGN §10, issue 24). Documents are the truth
 * while people are in the room; the disk catches up within `writeDelayMs` (atomic writes, its
 * line endings, BOM and mode kept). Changes made on disk by anything else arrive as a
 * three-way merge from the last synced text, applied to the document like a peer's edit, so
 * nobody's typing is lost; a write replaces only what was last synced, so nothing written on
 * disk is lost either (issue 32). Files created, deleted or renamed on either side follow on the
 * other; a rename on disk keeps the document, and a file that stops being text keeps it too.
 * At start, disk and documents are reconciled the same way (a kill -9 between a
 * document's update and its write loses nothing: the last synced text says who moved).
 *
 * A file nobody opened has no document (issue 36, decision record "lazy documents"): its entry is
 * `listed`, the disk is its truth, and a change on disk only updates the listing. Its document is
 * made when someone or the agent opens or edits it (`Room.doc` asks this sync, its `DocSource`,
 * for the text, which becomes the last synced text); from then on it is merged as above.
 */
export class FolderSync implements FolderProject {
  readonly workspaceId: string;
  readonly root: string;
  private readonly room: Room;
  private readonly disk: Disk;
  private readonly synced = new Map<string, Synced>();
  private readonly writeTimers = new Map<string, NodeJS.Timeout>();
  private readonly spelling = new DiskSpelling();
  /** Files deleted on disk whose create may still come (a rename, a checkout), by path. */
  private readonly pendingDeletes: DeleteWindow;
  private readonly detach = new Map<string, () => void>();
  /**
   * What a listed file's bytes were when last read (`contentDigest`), by file id: a move on disk
   * (a delete and a create) pairs by it and keeps the file's id. In memory only; a warm start
   * reads them again off the hot path (`digestListed`).
   */
  private readonly listedDigests = new Map<string, string>();
  /** A listed file's size when admitted (`admit`), by file id: its growth is admitted again. */
  private readonly listedBytes = new Map<string, number>();
  /** fileId → path, as the tree last had it (to see renames and deletes). */
  private paths = new Map<string, string>();
  /** Disk work runs one piece at a time, in order. */
  private queue: Promise<void> = Promise.resolve();
  /** Set while this sync changes the room itself: those changes are not echoed to the disk. */
  private applying = false;
  private stopWatching: (() => Promise<void>) | null = null;
  private stopped = false;
  /** The listed files' first read after the start (`classifyListed`). */
  private classifying: Promise<void> = Promise.resolve();
  private readonly writeDelayMs: number;

  constructor(private readonly options: FolderSyncOptions) {
    this.workspaceId = options.workspaceId;
    this.root = options.disk.root;
    this.room = options.room;
    this.disk = options.disk;
    this.writeDelayMs = options.writeDelayMs ?? 100;
    // A delete whose window passed is decided in turn, after the disk work queued before it.
    this.pendingDeletes = new DeleteWindow(options.renameWindowMs ?? 100, (path) => {
      void this.enqueue(async () => {
        if (this.pendingDeletes.take(path)) await this.settleDelete(path);
      });
    });
  }

  /** Reconciles disk and workspace, then follows both. */
  async start(): Promise<void> {
    this.room.docSource = this.source;
    // The watcher's start (a walk of the folder of its own) and the listing run together (issue
    // 36); what changed on disk between the two is found by listing once more after it.
    const watching = this.disk.watch((events) => this.enqueue(() => this.onDisk(events)));
    const reconciled = this.enqueue(() => this.reconcile());
    this.stopWatching = await watching.catch(async (error: unknown) => {
      await reconciled;
      throw error;
    });
    await reconciled;
    this.paths = this.filePaths();
    void this.enqueue(() => this.relist());
    this.classifying = this.classifyListed();
    this.room.pathGuards.add(this.guard);
    this.room.entries.observe(this.onTree);
    this.room.docLoaded.add(this.attach);
    this.room.docDropped.add(this.drop);
    for (const [fileId, live] of this.room.loadedFiles()) this.attach(fileId, live);
  }

  /** Writes what is pending, then stops following the disk. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.stopWatching?.();
    await this.classifying;
    this.room.pathGuards.delete(this.guard);
    if (this.room.docSource === this.source) this.room.docSource = null;
    this.room.entries.unobserve(this.onTree);
    this.room.docLoaded.delete(this.attach);
    this.room.docDropped.delete(this.drop);
    for (const undo of this.detach.values()) undo();
    // A delete not settled yet stays in the workspace: the next start's reconcile decides it.
    this.pendingDeletes.clear();
    const pending = [...this.writeTimers.keys()];
    for (const timer of this.writeTimers.values()) clearTimeout(timer);
    this.writeTimers.clear();
    for (const fileId of pending) void this.enqueue(() => this.write(fileId));
    await this.queue;
  }

  /**
   * Resolves once the listed files are classified (text or binary: read after the start), every pending write has run, every delete waiting for its create is decided
   * (`renameWindowMs`), and the disk work queued so far is done.
   */
  async flushed(): Promise<void> {
    await this.classifying;
    for (;;) {
      await this.queue;
      if (this.pendingDeletes.size > 0) {
        await this.pendingDeletes.empty();
        continue;
      }
      const pending = [...this.writeTimers.keys()];
      for (const fileId of pending) {
        this.cancelWrite(fileId);
        void this.enqueue(() => this.write(fileId));
      }
      const queue = this.queue;
      await queue;
      if (this.writeTimers.size === 0 && this.pendingDeletes.size === 0 && queue === this.queue) return;
    }
  }

  private enqueue(work: () => Promise<void> | void): Promise<void> {
    this.queue = this.queue.then(work).catch((error: unknown) => {
      this.options.log('error', 'folder sync failed', { root: this.root, error: String(error) });
    });
    return this.queue;
  }

  // ---- start: the disk and the workspace as they are now ----

  private async reconcile(): Promise<void> {
    const onDisk = new Set<string>();
    // Files the workspace does not have yet: listed together, in one change of the tree.
    const unseen: Array<{ path: string; size: number }> = [];
    for (const { path: listed, size } of await this.disk.list()) {
      const path = this.spelling.note(listed);
      if (validatePath(path)) continue;
      onDisk.add(path);
      const entry = this.room.entries.get(path) as IndexEntry | undefined;
      if (!entry) unseen.push({ path, size });
      // A file with no document: the disk is its truth, there is nothing to compare (issue 36).
      else if (entry.kind !== 'file' || !entry.listed) await this.fromDisk(path);
    }
    // Listed from the directory entries alone, in one change of the tree: nothing is read here.
    // Too large to be text by its size is binary at once; the rest is read after the start, off
    // the hot path (`classifyListed`: text or binary, and a digest to know a move by). A file past
    // what the workspace may hold (`admit`: a terminal's working copy within the quota) stays out.
    const admitted = this.options.admit ? unseen.filter(({ path, size }) => this.options.admit!(path, size)) : unseen;
    const fresh = admitted.map(({ path, size }) => (size > maxTextBytes ? { path, binaryBytes: size } : { path, listed: true }));
    if (fresh.length) {
      let created = new Map<string, string>();
      this.inRoom(() => ({ created } = this.room.createFiles(fresh)));
      const sizes = new Map(admitted.map(({ path, size }) => [path, size]));
      for (const [path, fileId] of created) {
        const bytes = sizes.get(path);
        if (bytes !== undefined) this.listedBytes.set(fileId, bytes);
      }
    }
    // In the workspace but not on disk: deleted there while we were away, or never written.
    for (const [path, entry] of [...this.room.entries]) {
      if (entry.kind !== 'file' || onDisk.has(path) || this.disk.ignored(path)) continue;
      if (entry.listed) {
        this.inRoom(() => this.room.apply({ type: 'file.delete', requestId: 0, path }));
        continue;
      }
      const base = this.baseOf(entry.fileId);
      const text = this.textOf(entry.fileId);
      if (base !== null && (text === null || text === base)) this.inRoom(() => this.room.apply({ type: 'file.delete', requestId: 0, path }));
      // One file the folder's edge refuses (a link on its way now) does not stop the others.
      else if (text !== null) await this.write(entry.fileId, path).catch((error: unknown) => this.options.log('warn', 'a document was not written to the folder', { root: this.root, path, error: String(error) }));
    }
  }

  /**
   * Lists the folder again once the watcher is up: a file made, changed or deleted after the
   * start's listing read its folder and before the watcher watched it is taken in as the watcher
   * would have reported it. Files with documents are compared again; listed ones have nothing to
   * compare (the disk is their truth).
   */
  private async relist(): Promise<void> {
    if (this.stopped) return;
    const events: DiskEvent[] = [];
    const onDisk = new Set<string>();
    for (const { path: listed } of await this.disk.list()) {
      const path = this.spelling.note(listed);
      if (validatePath(path)) continue;
      onDisk.add(path);
      const entry = this.room.entries.get(path) as IndexEntry | undefined;
      if (!entry || (entry.kind === 'file' && !entry.listed && !entry.binary)) events.push({ type: entry ? 'update' : 'create', path: listed });
    }
    // Only files the disk had: one made in the IDE may not be written yet.
    for (const [path, entry] of this.room.entries) {
      if (entry.kind !== 'file' || onDisk.has(path) || this.disk.ignored(path)) continue;
      if (entry.listed || entry.binary || this.synced.get(entry.fileId)?.digest) events.push({ type: 'delete', path });
    }
    if (events.length) await this.onDisk(events);
  }

  // ---- disk → workspace ----

  private async onDisk(events: DiskEvent[]): Promise<void> {
    if (this.stopped) return;
    // The last event per path decides (a create then a delete is a delete).
    const last = new Map<string, DiskEvent>();
    for (const event of events) {
      const path = event.type === 'delete' ? normalizePath(event.path) : this.spelling.note(event.path);
      if (!validatePath(path)) last.set(path, event);
    }
    // Deletes first: the create that makes one of them a rename may be in this same batch.
    for (const [path, event] of last) if (event.type === 'delete') this.deleteLater(path);
    const checked = new Set<string>(); // neighbours looked at for a folded-away delete, once a batch
    for (const [path, event] of last) if (event.type !== 'delete') await this.createdOrChanged(path, checked);
  }

  /**
   * A delete waits `renameWindowMs` for its create (a rename, a checkout) before it is one. A
   * folder's delete (the watcher reports a moved folder, not its files) is one for each file in it.
   */
  private deleteLater(path: string): void {
    const files = this.room.entries.get(path)?.kind === 'file' ? [path] : [...this.paths.values()].filter((file) => file.startsWith(`${path}/`));
    for (const file of files) this.pendingDeletes.hold(file);
  }

  private async settleDelete(path: string): Promise<void> {
    if (this.stopped) return;
    if (await this.disk.read(this.spelling.onDisk(path))) await this.fromDisk(path);
    else this.deletedOnDisk(path);
  }

  private async createdOrChanged(path: string, checked: Set<string>): Promise<void> {
    // Deleted and written again (git checkout -- f): a change of the same file, merged by line.
    const recreated = this.pendingDeletes.take(path);
    if (!recreated && !this.room.entries.has(path)) {
      const file = await this.disk.read(this.spelling.onDisk(path));
      // Not a file: a folder moved or made on disk (the watcher names the folder, not its files).
      if (!file) return this.folderOnDisk(path, checked);
      await this.noticeFoldedDeletes(path, checked);
      if (this.pendingDeletes.size > 0) this.renamedOnDisk(path, file.bytes);
    }
    await this.fromDisk(path);
  }

  /**
   * The watcher folds a create and a delete of one path in a batch into nothing: a file saved
   * by renaming over it (sed -i, an editor) and then moved away reports no delete, only the
   * create at its new name. So a new file's neighbours in the tree are checked: one gone from
   * disk is a delete (which the new file may pair with). Skipped in crowded folders.
   */
  private async noticeFoldedDeletes(path: string, checked: Set<string>): Promise<void> {
    const folder = path.slice(0, Math.max(0, path.lastIndexOf('/')));
    const neighbours: string[] = [];
    for (const [fileId, other] of this.paths) {
      if (other === path || checked.has(other) || other.slice(0, Math.max(0, other.lastIndexOf('/'))) !== folder || this.pendingDeletes.has(other)) continue;
      // Only files the disk had when last synced: one made in the IDE may not be written yet.
      if (this.synced.get(fileId)?.digest || this.isListed(other)) neighbours.push(other);
    }
    if (neighbours.length > maxNeighboursChecked) return;
    for (const other of neighbours) checked.add(other);
    for (const other of neighbours) if (!(await this.disk.read(this.spelling.onDisk(other)))) this.deleteLater(other);
  }

  private async folderOnDisk(path: string, checked: Set<string>): Promise<void> {
    for (const file of await this.disk.list(this.spelling.onDisk(path))) await this.createdOrChanged(this.spelling.note(file.path), checked);
  }

  /**
   * A new file that is a just-deleted one moved (`renamedFrom`): the entry moves, keeping its
   * document, its history and the tabs open on it; typing the disk had not seen yet is written to
   * the new path, and a change made with the move is taken in, by the merge that follows.
   */
  private renamedOnDisk(path: string, bytes: Uint8Array): void {
    const deleted: DeletedFile[] = [];
    for (const file of this.pendingDeletes.paths()) {
      const entry = this.room.entries.get(file) as IndexEntry | undefined;
      if (entry?.kind !== 'file' || entry.binary) continue;
      deleted.push({ path: file, digest: this.synced.get(entry.fileId)?.digest ?? this.listedDigests.get(entry.fileId) ?? null, base: () => this.baseOf(entry.fileId) });
    }
    const from = renamedFrom(path, contentDigest(bytes), () => decodeText(bytes, maxSyncedTextBytes)?.text, deleted);
    if (from === undefined) return;
    this.pendingDeletes.take(from);
    let moved = false;
    this.inRoom(() => (moved = this.room.apply({ type: 'file.rename', requestId: 0, from, to: path }).ok));
    if (moved) this.spelling.forget(from);
    else this.deletedOnDisk(from);
  }

  /** A file on disk is new or changed: bring it into the workspace. */
  private async fromDisk(path: string): Promise<void> {
    const file = await this.disk.read(this.spelling.onDisk(path));
    if (!file) return;
    const entry = this.room.entries.get(path) as IndexEntry | undefined;
    if (entry?.kind === 'folder') return;
    const listed = entry?.kind === 'file' && entry.listed === true;
    const hasDocument = entry?.kind === 'file' && !entry.binary && !listed;
    const decoded = decodeText(file.bytes, hasDocument ? maxSyncedTextBytes : maxTextBytes);
    const digest = contentDigest(file.bytes);
    if (!decoded && hasDocument) {
      // Never trade a document for a binary entry: what people typed (and type next) stays.
      return this.markUnsynced(path, file.bytes.byteLength > maxSyncedTextBytes ? 'too-large' : 'not-text');
    }
    if (!entry && this.options.admit && !this.options.admit(path, file.bytes.byteLength)) return;
    if (!decoded) {
      if (entry?.kind === 'file' && entry.binary && entry.bytes === file.bytes.byteLength) return;
      this.inRoom(() => {
        if (entry) this.room.apply({ type: 'file.delete', requestId: 0, path });
        this.room.createBinaryFile(path, file.bytes.byteLength);
      });
      return;
    }
    // Still text, and no document: the listing has nothing more to learn.
    if (listed) {
      const growth = file.bytes.byteLength - (this.listedBytes.get(entry.fileId) ?? 0);
      if (growth > 0 && this.options.admit && !this.options.admit(path, growth)) {
        // Grown past the quota: it leaves the workspace (it had no document; the disk keeps it).
        this.inRoom(() => this.room.apply({ type: 'file.delete', requestId: 0, path }));
        this.forget(entry.fileId);
        return;
      }
      this.listedBytes.set(entry.fileId, file.bytes.byteLength);
      this.listedDigests.set(entry.fileId, digest);
      return;
    }
    if (!entry || entry.binary) {
      let created = new Map<string, string>();
      this.inRoom(() => {
        if (entry) this.room.apply({ type: 'file.delete', requestId: 0, path });
        // Listed, no document: a folder of thousands of files would hold a doc per file.
        ({ created } = this.room.createFiles([{ path, listed: true }]));
      });
      const fileId = created.get(path);
      if (fileId) this.listedDigests.set(fileId, digest);
      if (fileId) this.listedBytes.set(fileId, file.bytes.byteLength);
      return;
    }
    const fileId = entry.fileId;
    if (entry.unsynced) this.markUnsynced(path, undefined);
    this.withDoc(fileId, (live) => {
      const text = live.doc.getText(FILE_TEXT_KEY);
      const current = text.toString();
      const base = this.baseOf(fileId);
      if (decoded.text === base || decoded.text === current) {
        this.remember(fileId, decoded.text === current ? current : base!, decoded.format, file.mode, digest);
        if (current !== decoded.text) this.scheduleWrite(fileId);
        return;
      }
      // Never synced before (a workspace opened from this folder for the first time): the disk's
      // text. Made empty while its file was away: the disk's text, then what was typed.
      const provisional = this.synced.get(fileId)?.provisional === true;
      const merged = base === null ? decoded.text : provisional ? (current === '' ? decoded.text : `${current}${current.endsWith('\n') ? '' : '\n'}${decoded.text}`) : mergeText(current, base, decoded.text);
      const growth = Buffer.byteLength(merged) - Buffer.byteLength(current);
      // Over the quota the document keeps what it holds (nothing stored is lost).
      if (growth > 0 && this.options.admit && !this.options.admit(path, growth)) return;
      live.doc.transact(() => applyText(text, merged), DISK_ORIGIN);
      this.remember(fileId, decoded.text, decoded.format, file.mode, digest);
      if (merged !== decoded.text) this.scheduleWrite(fileId);
    });
  }

  /**
   * Runs `use` on a file's doc, loading it if needed; a doc loaded only for this is freed again
   * (unless a write to disk is pending for it: the write frees it).
   */
  private withDoc<T>(fileId: string, use: (live: LiveDoc) => T): T | null {
    const loaded = this.room.loadedFiles().has(fileId);
    const live = this.room.doc(fileId);
    if (!live) return null;
    try {
      return use(live);
    } finally {
      if (!loaded && !this.writeTimers.has(fileId)) this.room.releaseDoc(fileId);
    }
  }

  private deletedOnDisk(path: string): void {
    const entry = this.room.entries.get(path) as IndexEntry | undefined;
    if (entry?.kind !== 'file') return;
    if (entry.unsynced) this.markUnsynced(path, undefined); // the file that was not text is gone
    const text = entry.binary || entry.listed ? null : this.textOf(entry.fileId);
    const base = this.baseOf(entry.fileId);
    // Typing the disk never saw is not thrown away: the document is written back.
    if (text !== null && base !== null && text !== base) {
      const synced = this.synced.get(entry.fileId);
      if (synced) synced.digest = null;
      return this.scheduleWrite(entry.fileId);
    }
    this.inRoom(() => this.room.apply({ type: 'file.delete', requestId: 0, path }));
    this.forget(entry.fileId);
    this.spelling.forget(path);
  }

  // ---- workspace → disk ----

  private readonly attach = (fileId: string, live: LiveDoc): void => {
    if (this.detach.has(fileId)) return;
    const onUpdate = (_update: Uint8Array, origin: unknown) => {
      if (origin !== DISK_ORIGIN) this.scheduleWrite(fileId);
    };
    live.doc.on('update', onUpdate);
    this.detach.set(fileId, () => live.doc.off('update', onUpdate));
  };

  private readonly drop = (fileId: string): void => {
    this.detach.get(fileId)?.();
    this.detach.delete(fileId);
  };

  /** The tree changed: files created, renamed or deleted in the IDE (or by the agent) follow on disk. */
  private readonly onTree = (_event: Y.YMapEvent<IndexEntry>): void => {
    const before = this.paths;
    const after = this.filePaths();
    this.paths = after;
    if (this.applying) return;
    for (const [fileId, path] of after) {
      const was = before.get(fileId);
      if (was === undefined) this.scheduleWrite(fileId, 0);
      else if (was !== path) {
        if (this.refused(path) || this.refused(was)) continue;
        const from = this.spelling.onDisk(was);
        this.spelling.forget(was);
        void this.enqueue(() => this.disk.rename(from, path));
      }
    }
    for (const [fileId, path] of before) {
      if (after.has(fileId)) continue;
      this.cancelWrite(fileId);
      this.forget(fileId);
      const onDisk = this.spelling.onDisk(path);
      this.spelling.forget(path);
      if (!this.refused(path)) void this.enqueue(() => this.disk.remove(onDisk));
    }
  };

  /** Paths a workspace never writes on disk (git's folder); said once in the log. */
  private refused(path: string): boolean {
    if (!inGitFolder(path)) return false;
    this.options.log('warn', 'a workspace path inside .git was not written to the folder', { root: this.root, path });
    return true;
  }

  private scheduleWrite(fileId: string, delayMs = this.writeDelayMs): void {
    if (this.stopped) return;
    this.cancelWrite(fileId);
    this.writeTimers.set(
      fileId,
      setTimeout(() => {
        this.writeTimers.delete(fileId);
        void this.enqueue(() => this.write(fileId));
      }, delayMs),
    );
  }

  private cancelWrite(fileId: string): void {
    const timer = this.writeTimers.get(fileId);
    if (timer !== undefined) clearTimeout(timer);
    this.writeTimers.delete(fileId);
  }

  /**
   * Writes a document to its file, unless the disk already has its text. The file is replaced
   * only if it still holds what was last synced: a change someone else made since (its watcher
   * event not taken in yet) is merged into the document first, and the merge written after.
   */
  private async write(fileId: string, path = this.room.pathOf(fileId)): Promise<void> {
    if (path === null || this.refused(path)) return;
    const entry = this.room.entries.get(path) as IndexEntry | undefined;
    if (entry?.kind !== 'file' || entry.binary || entry.unsynced || entry.listed) return;
    const text = this.textOf(fileId);
    if (text === null) return;
    const synced = this.synced.get(fileId);
    if (synced && synced.base === text) return;
    const format = synced?.format ?? { bom: false, crlf: false };
    const onDisk = this.spelling.onDisk(path);
    const bytes = format.mixed ? encodeLike(text, format, (await this.disk.read(onDisk))?.bytes ?? null) : encodeText(text, format);
    if (await this.disk.write(onDisk, bytes, synced?.mode, synced ? synced.digest : null)) {
      this.remember(fileId, text, format, synced?.mode, contentDigest(bytes));
      return;
    }
    // Changed on disk since: merged now (a merge that differs from the disk schedules its write).
    await this.fromDisk(path);
  }

  /** The room asks before a path is created, renamed or deleted; the sync's own changes pass. */
  private readonly guard = (path: string): string | null => (this.applying ? null : this.disk.outsideWorkspace(path));

  // ---- what a FolderProject offers REST ----

  outsideWorkspace(path: string): string | null {
    return this.disk.outsideWorkspace(normalizePath(path));
  }

  async writeFiles(files: ReadonlyArray<{ path: string; bytes: Uint8Array }>): Promise<WrittenFile[]> {
    const outcomes: WrittenFile[] = [];
    await this.enqueue(async () => {
      let fresh: FreshFile[] = [];
      for (const { path: requested, bytes } of files) {
        const path = normalizePath(requested);
        if (validatePath(path) || this.disk.ignored(path) || inGitFolder(path)) {
          outcomes.push({ path, ok: false, message: `"${requested}" cannot be written in this folder.` });
          continue;
        }
        try {
          await this.disk.write(path, bytes);
        } catch (error) {
          outcomes.push({ path, ok: false, message: `It could not be written to the folder (${(error as NodeJS.ErrnoException).code ?? String(error)}).` });
          continue;
        }
        if (this.room.entries.has(path)) {
          await this.fromDisk(path);
          outcomes.push({ path, ok: true, created: false });
          continue;
        }
        const decoded = decodeText(bytes);
        fresh.push(decoded ? { path, text: decoded.text, format: decoded.format, digest: contentDigest(bytes) } : { path, binaryBytes: bytes.byteLength });
        if (fresh.length >= uploadBatchFiles) {
          outcomes.push(...(await this.createWritten(fresh)));
          fresh = [];
        }
      }
      outcomes.push(...(await this.createWritten(fresh)));
    });
    return outcomes;
  }

  /**
   * Files just written, created in the workspace in one change of the tree (one per file made an
   * upload quadratic: each change is an index update, and a walk of every path here), then a
   * yield to I/O, so a large upload is many short pieces of work.
   */
  private async createWritten(fresh: FreshFile[]): Promise<WrittenFile[]> {
    if (fresh.length === 0) return [];
    let created = new Map<string, string>();
    let refused: Array<{ path: string; message: string }> = [];
    this.inRoom(() => ({ created, refused } = this.room.createFiles(fresh)));
    const outcomes: WrittenFile[] = [];
    for (const file of fresh) {
      const fileId = created.get(file.path);
      if (fileId && file.format) this.remember(fileId, file.text ?? '', file.format, undefined, file.digest ?? null);
      if (fileId) outcomes.push({ path: file.path, ok: true, created: true });
    }
    // Not removed again: the write may have replaced a file the watcher had not reported yet.
    for (const { path, message } of refused) outcomes.push({ path, ok: false, message: `It was written to the folder, but the workspace cannot show it: ${message}` });
    await new Promise<void>((resolve) => setImmediate(resolve));
    return outcomes;
  }

  encodeText(path: string, text: string): Uint8Array {
    const entry = this.room.entries.get(normalizePath(path)) as IndexEntry | undefined;
    const format = entry?.kind === 'file' ? this.synced.get(entry.fileId)?.format : undefined;
    return encodeText(text, format ?? { bom: false, crlf: false });
  }

  async readBinary(path: string): Promise<Uint8Array | null> {
    const normalized = normalizePath(path);
    if (validatePath(normalized)) return null;
    return (await this.disk.read(this.spelling.onDisk(normalized)))?.bytes ?? null;
  }

  // ---- listed files: their documents are made from the disk when first opened ----

  private readonly source: DocSource = {
    fill: (fileId, path) => {
      const file = this.disk.readSync(this.spelling.onDisk(path));
      // Gone from disk, its event not taken in yet (a move, a delete): an empty document, synced
      // as empty for now (in memory only). The event decides: a move brings the disk's text in
      // beside anything typed meanwhile, a delete takes the entry away unless something was typed.
      if (!file) {
        this.synced.set(fileId, { base: '', format: { bom: false, crlf: false }, mode: undefined, digest: null, provisional: true });
        return '';
      }
      const decoded = decodeText(file.bytes);
      if (!decoded) {
        // Not text any more (it was when listed): a binary entry, as the listing would have made it.
        this.inRoom(() => this.room.entries.doc!.transact(() => this.room.entries.set(path, { kind: 'file', fileId, binary: true, bytes: file.bytes.byteLength }), GATEWAY_ORIGIN));
        return null;
      }
      // The text the document starts from is the disk's: synced.
      this.listedDigests.delete(fileId);
      this.remember(fileId, decoded.text, decoded.format, file.mode, contentDigest(file.bytes));
      return decoded.text;
    },
    peek: (_fileId, path) => {
      const file = this.disk.readSync(this.spelling.onDisk(path));
      return file ? (decodeText(file.bytes)?.text ?? null) : null;
    },
  };

  /**
   * After a start, the listed files whose digests are not known (a warm start lists, it does not
   * read) are read in batches, yielding between them, so that a move on disk keeps their ids.
   */
  /**
   * Reads every listed file not read since it was listed, in batches off the hot path: a file that
   * is not text becomes a binary entry (its id kept; as its first open would make it), a text one
   * gets its digest, so that a move on disk pairs and keeps its id. A file read here that a disk
   * event or an open has dealt with meanwhile (no longer listed, or already digested) is left to
   * them: they read it later than this pass did.
   */
  private async classifyListed(): Promise<void> {
    const unknown: Array<[string, string]> = [];
    for (const [path, entry] of this.room.entries) if (entry.kind === 'file' && entry.listed && !this.listedDigests.has(entry.fileId)) unknown.push([path, entry.fileId]);
    for (let at = 0; at < unknown.length && !this.stopped; at += listingReadBatch) {
      const batch = unknown.slice(at, at + listingReadBatch);
      const files = await Promise.all(batch.map(([path]) => this.disk.read(this.spelling.onDisk(path)).catch(() => null)));
      const binary: Array<[string, IndexEntry]> = [];
      batch.forEach(([path, fileId], i) => {
        const file = files[i];
        const entry = this.room.entries.get(path) as IndexEntry | undefined;
        if (this.stopped || !file || entry?.kind !== 'file' || entry.fileId !== fileId || !entry.listed || this.listedDigests.has(fileId)) return;
        if (isText(file.bytes)) this.listedDigests.set(fileId, contentDigest(file.bytes));
        else binary.push([path, { kind: 'file', fileId, binary: true, bytes: file.bytes.byteLength }]);
      });
      if (binary.length) this.inRoom(() => this.room.entries.doc!.transact(() => binary.forEach(([path, entry]) => this.room.entries.set(path, entry)), GATEWAY_ORIGIN));
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  private isListed(path: string): boolean {
    const entry = this.room.entries.get(path) as IndexEntry | undefined;
    return entry?.kind === 'file' && entry.listed === true;
  }

  // ---- bookkeeping ----

  private filePaths(): Map<string, string> {
    const paths = new Map<string, string>();
    for (const [path, entry] of this.room.entries) if (entry.kind === 'file') paths.set(entry.fileId, path);
    return paths;
  }

  private textOf(fileId: string): string | null {
    return this.withDoc(fileId, (live) => live.doc.getText(FILE_TEXT_KEY).toString());
  }

  private baseKey(fileId: string): string {
    return `folder-base:${this.workspaceId}:${fileId}`;
  }

  private baseOf(fileId: string): string | null {
    return this.synced.get(fileId)?.base ?? this.options.bases.get(this.baseKey(fileId));
  }

  private remember(fileId: string, base: string, format: TextFormat, mode: number | undefined, digest: string | null): void {
    const previous = this.synced.get(fileId);
    this.synced.set(fileId, { base, format, mode: mode ?? previous?.mode, digest });
    if (previous?.base !== base) this.options.bases.set(this.baseKey(fileId), base);
  }

  private forget(fileId: string): void {
    this.synced.delete(fileId);
    this.listedDigests.delete(fileId);
    this.listedBytes.delete(fileId);
  }

  /**
   * Says on a file's entry why its document no longer reaches the disk (undefined: it does
   * again); the tab shows it. Its document is kept, typing and all.
   */
  private markUnsynced(path: string, reason: UnsyncedReason | undefined): void {
    const entry = this.room.entries.get(path);
    if (entry?.kind !== 'file' || entry.unsynced === reason) return;
    const { unsynced: _was, ...rest } = entry;
    const next: IndexEntry = reason ? { ...rest, unsynced: reason } : rest;
    if (reason) this.options.log('warn', 'a file stopped being text; its document is kept and no longer written', { root: this.root, path, reason });
    this.inRoom(() => this.room.entries.doc!.transact(() => this.room.entries.set(path, next), GATEWAY_ORIGIN));
  }

  private inRoom(change: () => void): void {
    this.applying = true;
    try {
      change();
    } finally {
      this.applying = false;
    }
    this.paths = this.filePaths();
  }
}
