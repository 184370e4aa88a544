import {
  describePathError,
  encodeControl,
  FILE_TEXT_KEY,
  INDEX_DOC_ID,
  INDEX_ENTRIES_KEY,
  isWithin,
  THREAD_DOC_ID,
  normalizePath,
  parentPath,
  validatePath,
  type FileOp,
  type IndexEntry,
  type RequestErrorCode,
  type ThreadTurnRecord,
  type TurnInfo,
  THREAD_TURNS_KEY,
} from '@flint/protocol';
import { endWriting, hunksOf } from '@flint/change-set';
import type * as Y from 'yjs';
import type { WorkspaceRecord } from './ports/Store';
import type { WorkspaceMessage } from './ports/ClusterBus';
import { CLUSTER_ORIGIN, GATEWAY_ORIGIN, LiveDoc, type DocContext } from './LiveDoc';
import type { RoomSession } from './Subscriber';
import type { Random } from './ports/Random';

interface TreeIndex {
  pathById: Map<string, string>;
  /** Every folder a path implies (explicit folder entries are in the index itself). */
  folders: Set<string>;
  files: number;
}

/**
 * Where a listed file's text comes from (a folder project: its disk). The kernel knows nothing of
 * folders; a folder project sets one on its room.
 */
export interface DocSource {
  /**
   * The text a listed file's new document starts with, read now; the source takes it as synced.
   * Null: it has none (gone, or not text: the source changed its entry), and no document is made.
   */
  fill(fileId: string, path: string): string | null;
  /** The file's text as it is now, without making a document; null when it has none. */
  peek(fileId: string, path: string): string | null;
}

export type OpResult = { ok: true } | { ok: false; code: RequestErrorCode; message: string };

/**
 * Work a feature runs in a room's files (the agent's turns), as the kernel sees it: the room
 * keeps a doc it writes in loaded, tells it of deleted files and stops it before the docs go.
 * The feature holds the work itself and registers here (`Room.writers`).
 */
export interface RoomWriter {
  /** Whether it writes in `fileId` now (its doc must stay loaded). */
  writesIn(fileId: string): boolean;
  /** The turns writing now: a hunk still marked `writing` by any other was left by one that is gone. */
  writing(): Iterable<string>;
  /** Files left the tree: what writes in them ends, before their docs go. */
  filesDeleted(fileIds: readonly string[]): void;
  /** The room leaves memory: everything stops now. */
  stop(): void;
}

const fail = (code: RequestErrorCode, message: string): OpResult => ({ ok: false, code, message });

/**
 * The live state of one workspace: its index (the file tree) and the file documents that
 * sessions have open. Only the gateway writes the index, after checking every path. Paths are
 * stored and compared in NFC ([P14]): every path a request names is normalized first.
 */
export class Room {
  readonly sessions = new Set<RoomSession>();
  /** What writes in this room's files besides its sessions (the agent's turns): see `RoomWriter`. */
  readonly writers = new Set<RoomWriter>();
  /** Told when the agent thread's doc is loaded (the thread closes turns a gone gateway left streaming). */
  readonly threadLoaded = new Set<(live: LiveDoc) => void>();
  readonly index: LiveDoc;
  /** The agent thread's doc, loaded on first use (most rooms never open it). */
  private threadDoc: LiveDoc | null = null;
  /** Told of every file doc loaded from now on (a folder project writes each to disk). */
  readonly docLoaded = new Set<(fileId: string, live: LiveDoc) => void>();
  /** Told of every file doc dropped (deleted, or the room unloading). */
  readonly docDropped = new Set<(fileId: string) => void>();
  /**
   * Say why a path is outside the workspace (a folder project's ignored files, git's folder, a
   * link on disk), or null: such a path is never created, renamed onto, moved or deleted.
   */
  readonly pathGuards = new Set<(path: string) => string | null>();
  /** A folder project's disk: listed files (no document yet) are read from it (issue 36). */
  docSource: DocSource | null = null;
  private treeIndex: TreeIndex | null = null;
  private readonly files = new Map<string, LiveDoc>();

  constructor(
    readonly workspace: WorkspaceRecord,
    private readonly ctx: DocContext,
  ) {
    this.index = this.load(INDEX_DOC_ID);
    this.index.doc.on('update', (_update: Uint8Array, origin: unknown) => {
      this.treeIndex = null;
      if (origin === CLUSTER_ORIGIN) this.dropFilesDeletedElsewhere();
    });
    this.normalizeStoredPaths();
  }

  /** Where this workspace's new ids come from (a thread's file ops draw theirs here too). */
  get random(): Random {
    return this.ctx.random;
  }

  /**
   * Workspaces written before paths were normalized may hold other spellings (macOS sends
   * decomposed names): they are renamed to NFC once, on load, so that every lookup — which
   * normalizes what it is asked for — finds them. A path whose NFC form is taken stays as it is.
   */
  private normalizeStoredPaths(): void {
    const renames = [...this.entries.keys()].filter((path) => normalizePath(path) !== path);
    if (renames.length === 0) return;
    this.index.doc.transact(() => {
      for (const path of renames) {
        const normalized = normalizePath(path);
        if (this.entries.has(normalized)) continue;
        this.entries.set(normalized, this.entries.get(path)!);
        this.entries.delete(path);
      }
    }, GATEWAY_ORIGIN);
  }

  private load(docId: string): LiveDoc {
    const live = new LiveDoc(this.workspace.id, docId, this.ctx);
    this.ctx.cluster.loaded(live);
    return live;
  }

  get entries(): Y.Map<IndexEntry> {
    return this.index.doc.getMap<IndexEntry>(INDEX_ENTRIES_KEY);
  }

  get loadedDocCount(): number {
    return this.files.size + 1 + (this.threadDoc ? 1 : 0);
  }

  /** The workspace's agent thread (only the gateway writes it). */
  get thread(): LiveDoc {
    if (this.threadDoc) return this.threadDoc;
    this.threadDoc = this.load(THREAD_DOC_ID);
    for (const listener of this.threadLoaded) listener(this.threadDoc);
    return this.threadDoc;
  }

  /**
   * Turns whose gateway stopped mid-hunk: their hunks still say `writing`, and nobody could
   * review them. They end here, with the turns.
   */
  endWriting(turns: readonly ThreadTurnRecord[]): void {
    for (const turn of turns) {
      for (const fileId of new Set([...turn.files.map((file) => file.fileId), ...Object.keys(turn.agentClients)])) {
        const live = this.doc(fileId);
        if (live) endWriting(live.doc, turn.turnId, GATEWAY_ORIGIN);
      }
    }
  }

  /** Whether a gateway of the cluster (this one included) is alive. */
  gatewayAlive(gatewayId: string): boolean {
    return this.ctx.cluster.isAlive(gatewayId);
  }

  /** This gateway's id in its cluster (the thread's turn records name it). */
  get gatewayId(): string {
    return this.ctx.cluster.gatewayId;
  }

  /** The thread turn running on another gateway of the cluster, if one is (and that gateway is alive). */
  threadTurnElsewhere(): { turnId: string; gateway: string } | null {
    const { cluster } = this.ctx;
    const turns = this.thread.doc.getMap<ThreadTurnRecord>(THREAD_TURNS_KEY);
    for (const turn of turns.values()) {
      if (turn.status !== 'streaming' || !turn.gateway || turn.gateway === cluster.gatewayId) continue;
      if (cluster.isAlive(turn.gateway)) return { turnId: turn.turnId, gateway: turn.gateway };
    }
    return null;
  }

  /** A document loaded here now, without loading it. */
  loaded(docId: string): LiveDoc | null {
    if (docId === INDEX_DOC_ID) return this.index;
    if (docId === THREAD_DOC_ID) return this.threadDoc;
    return this.files.get(docId) ?? null;
  }

  /** Every document loaded here now. */
  loadedDocs(): LiveDoc[] {
    return [this.index, ...(this.threadDoc ? [this.threadDoc] : []), ...this.files.values()];
  }

  /** Whether someone of another link shows as a name with this `nameKey` on another gateway (their cursors came here). */
  remoteNameTaken(key: string, exceptLinkId: string): boolean {
    if (!this.ctx.cluster.clustered) return false;
    return this.loadedDocs().some((doc) => doc.awareness.remoteNameTaken(key, exceptLinkId));
  }

  /** The colours people on other gateways show as (their cursors came here); empty alone. */
  remoteColors(): Set<string> {
    const colors = new Set<string>();
    if (this.ctx.cluster.clustered) for (const doc of this.loadedDocs()) doc.awareness.remoteColors(colors);
    return colors;
  }

  /** Tells the other gateways following this workspace (none when the gateway runs alone). */
  tellGateways(message: WorkspaceMessage): void {
    this.ctx.cluster.publish(this.workspace.id, message);
  }

  /** A turn's status to this gateway's sessions only. */
  sendTurn(turn: TurnInfo): void {
    const frame = encodeControl({ type: 'agent.turn', turn });
    for (const session of this.sessions) session.sendTurn(turn.turnId, frame);
  }

  /** The file id at a path, or null. */
  fileIdAt(path: string): string | null {
    const entry = this.entries.get(normalizePath(path));
    return entry?.kind === 'file' ? entry.fileId : null;
  }

  /** The live doc for an id, loading it on first use; null when no such file exists. */
  doc(docId: string): LiveDoc | null {
    if (docId === INDEX_DOC_ID) return this.index;
    if (docId === THREAD_DOC_ID) return this.thread;
    const loaded = this.files.get(docId);
    if (loaded) return loaded;
    if (!this.fileExists(docId)) return null;
    const path = this.pathOf(docId)!;
    const entry = this.entries.get(path);
    const listed = entry?.kind === 'file' && entry.listed === true;
    const doc = this.load(docId);
    if (listed && !this.fromSource(docId, path, doc)) return null;
    this.files.set(docId, doc);
    // Alone, no other gateway writes in it: a hunk still `writing` was left by a turn that is
    // gone (a restart mid-hunk) and must not stay out of review.
    if (!this.ctx.cluster.clustered) this.endStaleWriting(doc);
    for (const listener of this.docLoaded) listener(docId, doc);
    return doc;
  }

  /**
   * A listed file gets its document: the text its source reads now (unless something was
   * stored for it already), and its entry loses `listed` (one change of the tree). False, and no
   * document, when the source has no text for it.
   */
  private fromSource(fileId: string, path: string, live: LiveDoc): boolean {
    if (live.fresh) {
      const text = this.docSource ? this.docSource.fill(fileId, path) : null;
      if (text === null) {
        live.destroy();
        return false;
      }
      if (text) live.doc.transact(() => live.doc.getText(FILE_TEXT_KEY).insert(0, text), GATEWAY_ORIGIN);
    }
    const entry = this.entries.get(path);
    if (entry?.kind === 'file' && entry.fileId === fileId && entry.listed) {
      const { listed: _listed, ...rest } = entry;
      this.index.doc.transact(() => this.entries.set(path, rest), GATEWAY_ORIGIN);
    }
    return true;
  }

  /**
   * A file's text without making or keeping a document: a loaded doc's, a listed file's as its
   * source reads it now, else the stored doc's (loaded, read and freed). Search, sizes and
   * downloads read thousands of files no one opened this way.
   */
  textOf(fileId: string): string | null {
    const loaded = this.files.get(fileId);
    if (loaded) return loaded.doc.getText(FILE_TEXT_KEY).toString();
    const path = this.pathOf(fileId);
    if (path === null) return null;
    const entry = this.entries.get(path);
    if (entry?.kind !== 'file' || entry.binary) return null;
    if (entry.listed) return this.docSource ? this.docSource.peek(fileId, path) : null;
    const live = this.doc(fileId);
    if (!live) return null;
    const text = live.doc.getText(FILE_TEXT_KEY).toString();
    this.releaseDoc(fileId);
    return text;
  }

  private endStaleWriting(live: LiveDoc): void {
    const running = new Set<string>();
    for (const writer of this.writers) for (const turnId of writer.writing()) running.add(turnId);
    const stale = new Set<string>();
    for (const record of hunksOf(live.doc).values()) if (record.writing && !running.has(record.turnId)) stale.add(record.turnId);
    for (const turnId of stale) endWriting(live.doc, turnId, GATEWAY_ORIGIN);
  }

  /**
   * Compacts and frees a file's doc when nobody has it open and no turn writes in it (a folder
   * project reads thousands of files once); the next `doc()` loads it again.
   */
  releaseDoc(fileId: string): void {
    const live = this.files.get(fileId);
    if (!live || !live.idle) return;
    for (const writer of this.writers) if (writer.writesIn(fileId)) return;
    try {
      live.compact();
    } catch (error) {
      // Every update is stored already: the doc stays loaded, to be compacted at unload.
      this.ctx.log('warn', 'could not compact a released doc; keeping it loaded', { docId: live.docId, error: String(error) });
      return;
    }
    for (const listener of this.docDropped) listener(fileId);
    live.destroy();
    this.files.delete(fileId);
  }

  /** The file docs loaded now, by file id. */
  loadedFiles(): ReadonlyMap<string, LiveDoc> {
    return this.files;
  }

  private fileExists(fileId: string): boolean {
    const path = this.pathOf(fileId);
    return path !== null && !(this.entries.get(path) as { binary?: true } | undefined)?.binary;
  }

  pathOf(fileId: string): string | null {
    return this.tree().pathById.get(fileId) ?? null;
  }

  /**
   * What lookups need of the index, built once per change of it: a folder project of thousands
   * of files asks for paths and folders per file, and a walk of the index each time made opening
   * one quadratic (B12).
   */
  private tree(): TreeIndex {
    if (this.treeIndex) return this.treeIndex;
    const pathById = new Map<string, string>();
    const folders = new Set<string>();
    let files = 0;
    for (const [path, entry] of this.entries) {
      if (entry.kind === 'file') {
        pathById.set(entry.fileId, path);
        files++;
      }
      for (let parent = parentPath(path); parent !== ''; parent = parentPath(parent)) {
        if (folders.has(parent)) break;
        folders.add(parent);
      }
    }
    return (this.treeIndex = { pathById, folders, files });
  }

  /** Whether anything (a file, a folder, or a folder implied by a deeper path) is at `path`. */
  private occupied(path: string): boolean {
    return this.entries.has(path) || this.tree().folders.has(path);
  }

  /** A file sitting where a folder would have to be ("a.ts/b.ts") makes a path unusable. */
  private blockedByFile(path: string): boolean {
    for (let parent = parentPath(path); parent !== ''; parent = parentPath(parent)) {
      if (this.entries.get(parent)?.kind === 'file') return true;
    }
    return false;
  }

  private fileCount(): number {
    return this.tree().files;
  }

  /** Creates a file with content; used by seeding and by `file.create`. */
  createFile(requested: string, content = '', keepLoaded = true): OpResult & { fileId?: string } {
    const path = normalizePath(requested);
    const checked = this.checkNewPath(path);
    if (!checked.ok) return checked;
    if (this.fileCount() >= this.ctx.config.limits.maxFiles) {
      return fail('too_many_files', `A workspace can hold at most ${this.ctx.config.limits.maxFiles} files.`);
    }
    const fileId = this.ctx.random.id('f');
    const doc = this.load(fileId);
    this.files.set(fileId, doc);
    if (content) doc.doc.transact(() => doc.doc.getText(FILE_TEXT_KEY).insert(0, content), GATEWAY_ORIGIN);
    this.index.doc.transact(() => this.entries.set(path, { kind: 'file', fileId }), GATEWAY_ORIGIN);
    if (!keepLoaded) {
      doc.destroy();
      this.files.delete(fileId);
      return { ok: true, fileId };
    }
    for (const listener of this.docLoaded) listener(fileId, doc);
    return { ok: true, fileId };
  }

  /**
   * Creates many files in one change of the tree (a folder project's first open): one index
   * update instead of one per file. Their docs are written and not kept loaded. Each path is
   * checked as `createFile` checks it; the refused ones are returned with why. A `listed` file
   * gets no document: its entry says so, and its source gives its text when one is made.
   */
  createFiles(files: ReadonlyArray<{ path: string; text?: string; binaryBytes?: number; listed?: boolean }>): { created: Map<string, string>; refused: Array<{ path: string; message: string }> } {
    const created = new Map<string, string>();
    const refused: Array<{ path: string; message: string }> = [];
    const entries: Array<[string, IndexEntry]> = [];
    const tree = this.tree();
    const taken = new Set<string>();
    let count = tree.files;
    for (const file of files) {
      const path = normalizePath(file.path);
      const error = validatePath(path);
      const parents: string[] = [];
      for (let parent = parentPath(path); parent !== ''; parent = parentPath(parent)) parents.push(parent);
      let why: string | null = error ? describePathError(error) : null;
      if (!why && (this.entries.has(path) || tree.folders.has(path) || taken.has(path))) why = `"${path}" already exists.`;
      if (!why && parents.some((parent) => this.entries.get(parent)?.kind === 'file' || (taken.has(parent) && !tree.folders.has(parent)))) why = `A file is in the way of "${path}".`;
      if (!why && count >= this.ctx.config.limits.maxFiles) why = `A workspace can hold at most ${this.ctx.config.limits.maxFiles} files.`;
      if (why) {
        refused.push({ path, message: why });
        continue;
      }
      const fileId = this.ctx.random.id('f');
      if (file.binaryBytes !== undefined) entries.push([path, { kind: 'file', fileId, binary: true, bytes: file.binaryBytes }]);
      else if (file.listed) entries.push([path, { kind: 'file', fileId, listed: true }]);
      else {
        const doc = this.load(fileId);
        if (file.text) doc.doc.transact(() => doc.doc.getText(FILE_TEXT_KEY).insert(0, file.text!), GATEWAY_ORIGIN);
        doc.destroy();
        entries.push([path, { kind: 'file', fileId }]);
      }
      taken.add(path);
      for (const parent of parents) tree.folders.add(parent);
      tree.pathById.set(fileId, path);
      tree.files++;
      created.set(path, fileId);
      count++;
    }
    if (entries.length === 0) return { created, refused };
    this.index.doc.transact(() => {
      for (const [path, entry] of entries) this.entries.set(path, entry);
    }, GATEWAY_ORIGIN);
    // The lookups already know these files: rebuilding them from the whole index after each batch
    // made an upload in batches quadratic in the workspace's size.
    this.treeIndex = tree;
    return { created, refused };
  }

  /** A file that is on disk but not text (a folder project's image, archive, huge log): in the tree, no document. */
  createBinaryFile(requested: string, bytes: number): OpResult & { fileId?: string } {
    const path = normalizePath(requested);
    const checked = this.checkNewPath(path);
    if (!checked.ok) return checked;
    const fileId = this.ctx.random.id('f');
    this.index.doc.transact(() => this.entries.set(path, { kind: 'file', fileId, binary: true, bytes }), GATEWAY_ORIGIN);
    return { ok: true, fileId };
  }

  apply(op: FileOp): OpResult {
    switch (op.type) {
      case 'file.create':
        if (op.kind === 'file') return this.createFile(op.path);
        return this.createFolder(normalizePath(op.path));
      case 'file.rename':
        return this.rename(normalizePath(op.from), normalizePath(op.to));
      case 'file.delete':
        return this.remove(normalizePath(op.path));
    }
  }

  private checkNewPath(path: string): OpResult {
    const error = validatePath(path);
    if (error) return fail('invalid_path', describePathError(error));
    if (this.occupied(path)) return fail('exists', `"${path}" already exists.`);
    if (this.blockedByFile(path)) return fail('invalid_path', `A file is in the way of "${path}".`);
    return this.guarded(path);
  }

  /** Why `path` is outside the workspace, as the registered guards say; null when it is inside. */
  outsideWorkspace(path: string): string | null {
    for (const guard of this.pathGuards) {
      const why = guard(path);
      if (why) return why;
    }
    return null;
  }

  private guarded(path: string): OpResult {
    const why = this.outsideWorkspace(path);
    return why ? fail('forbidden', why) : { ok: true };
  }

  private createFolder(path: string): OpResult {
    const checked = this.checkNewPath(path);
    if (!checked.ok) return checked;
    this.index.doc.transact(() => this.entries.set(path, { kind: 'folder' }), GATEWAY_ORIGIN);
    return { ok: true };
  }

  /** Renames or moves a file or a folder with everything in it; file ids (and docs) stay. */
  private rename(from: string, to: string): OpResult {
    if (!this.occupied(from)) return fail('not_found', `"${from}" does not exist.`);
    if (isWithin(to, from)) return fail('invalid_path', 'A folder cannot be moved into itself.');
    const checked = this.checkNewPath(to);
    if (!checked.ok) return checked;
    const source = this.guarded(from);
    if (!source.ok) return source;
    const moves = [...this.entries].filter(([path]) => isWithin(path, from)).map(([path, entry]) => ({ path, entry, moved: to + path.slice(from.length) }));
    // A folder's files land where its new name's rules may leave them out ("y/.env").
    if (this.pathGuards.size > 0) {
      for (const { moved } of moves) {
        const landing = moved === to ? { ok: true as const } : this.guarded(moved);
        if (!landing.ok) return landing;
      }
    }
    this.index.doc.transact(() => {
      for (const { path, entry, moved } of moves) {
        this.entries.delete(path);
        this.entries.set(moved, entry);
      }
    }, GATEWAY_ORIGIN);
    return { ok: true };
  }

  private remove(path: string): OpResult {
    const removed = this.removeKeepingDocs(path);
    if (!removed.ok) return removed;
    for (const [, entry] of removed.entries) if (entry.kind === 'file') this.ctx.store.deleteDoc(`${this.workspace.id}/${entry.fileId}`);
    return { ok: true };
  }

  /**
   * Takes a file or folder out of the tree but keeps its files' docs stored, so that
   * `restoreEntries` can bring it back with its text and change set: what the agent deletes is
   * reviewable (decision 0026). Returns the entries it took out.
   */
  removeKeepingDocs(requested: string): ({ ok: true; entries: Array<[string, IndexEntry]> }) | Extract<OpResult, { ok: false }> {
    const path = normalizePath(requested);
    if (!this.occupied(path)) return { ok: false, code: 'not_found', message: `"${path}" does not exist.` };
    const guarded = this.guarded(path);
    if (!guarded.ok) return guarded;
    // A listed file's text is only on disk, which the delete empties: its doc is made first, so
    // that a restore brings the text back.
    for (const [key, entry] of [...this.entries]) {
      if (!isWithin(key, path) || entry.kind !== 'file' || !entry.listed) continue;
      if (this.doc(entry.fileId)) this.releaseDoc(entry.fileId);
    }
    const entries: Array<[string, IndexEntry]> = [];
    this.index.doc.transact(() => {
      for (const [key, entry] of [...this.entries]) {
        if (!isWithin(key, path)) continue;
        entries.push([key, entry]);
        this.entries.delete(key);
      }
    }, GATEWAY_ORIGIN);
    this.dropFiles(entries.flatMap(([, entry]) => (entry.kind === 'file' ? [entry.fileId] : [])));
    return { ok: true, entries };
  }

  /** Puts entries `removeKeepingDocs` took out back in the tree, all or none: a path taken since is refused. */
  restoreEntries(entries: ReadonlyArray<[string, IndexEntry]>): OpResult {
    for (const [path, entry] of entries) {
      const guarded = this.guarded(path);
      if (!guarded.ok) return guarded;
      if (entry.kind === 'folder' ? this.entries.get(path)?.kind === 'file' : this.occupied(path)) return fail('exists', `"${path}" exists now: move it away first.`);
      if (this.blockedByFile(path)) return fail('invalid_path', `A file is in the way of "${path}".`);
    }
    this.index.doc.transact(() => {
      for (const [path, entry] of entries) this.entries.set(path, entry);
    }, GATEWAY_ORIGIN);
    return { ok: true };
  }

  /** Files gone from the tree: their turns end and their docs leave memory. */
  private dropFiles(fileIds: string[]): void {
    // Before the docs go: a turn ending takes its agent's cursor out of its doc.
    for (const writer of [...this.writers]) writer.filesDeleted(fileIds);
    for (const fileId of fileIds) {
      for (const listener of this.docDropped) listener(fileId);
      this.files.get(fileId)?.destroy();
      this.files.delete(fileId);
    }
  }

  /** Another gateway of the cluster deleted files (and their stored docs): the loaded ones go here too. */
  private dropFilesDeletedElsewhere(): void {
    if (this.files.size === 0) return;
    const present = new Set<string>();
    for (const entry of this.entries.values()) if (entry.kind === 'file') present.add(entry.fileId);
    const gone = [...this.files.keys()].filter((fileId) => !present.has(fileId));
    if (gone.length > 0) this.dropFiles(gone);
  }

  /** Leaves every document `subscriber` had open. */
  leave(subscriber: RoomSession): void {
    this.sessions.delete(subscriber);
    this.index.unsubscribe(subscriber);
    this.threadDoc?.unsubscribe(subscriber);
    for (const doc of this.files.values()) doc.unsubscribe(subscriber);
  }

  /**
   * Frees every document without storing anything more: the store failed, and what is in memory
   * may hold a change it does not. The room's sessions must be closed first.
   */
  discard(): void {
    for (const fileId of this.files.keys()) for (const listener of this.docDropped) listener(fileId);
    for (const writer of [...this.writers]) writer.stop();
    for (const doc of this.loadedDocs()) doc.destroy();
    this.files.clear();
    this.threadDoc = null;
  }

  /**
   * Compacts and frees every document; the room must have no sessions. Throws, freeing nothing,
   * if the store cannot compact (its database is down): the registry keeps the room and retries.
   */
  unload(): void {
    const docs = [this.index, ...(this.threadDoc ? [this.threadDoc] : []), ...this.files.values()];
    for (const doc of docs) doc.compact();
    for (const fileId of this.files.keys()) for (const listener of this.docDropped) listener(fileId);
    for (const writer of [...this.writers]) writer.stop();
    for (const doc of docs) doc.destroy();
    this.files.clear();
    this.threadDoc = null;
  }
}
