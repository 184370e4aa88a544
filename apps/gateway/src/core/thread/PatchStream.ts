import { reviewHunks, hunksOf } from '@flint/change-set';
import { locateHunk, PatchReader, type LocateResult, type PatchEvent } from '@flint/patch-reader';
import { FILE_TEXT_KEY, type ThreadFileChange } from '@flint/protocol';
import { StreamingDiff, type DiffOp } from '@flint/stream-diff';
import type * as Y from 'yjs';
import type { AgentPeer } from '../agent/AgentPeer';
import { EditApplier } from '../agent/EditApplier';
import { GATEWAY_ORIGIN } from '../LiveDoc';

type Outcome = { ok: true } | { ok: false; message: string };

/** The workspace as a patch sees it: files by path, their live docs, and file operations. */
export interface PatchTarget {
  fileIdAt(path: string): string | null;
  /** The file's live doc (loaded on demand); null when it is gone. */
  docOf(fileId: string): Y.Doc | null;
  /** The agent's peer in a doc: its edits are the agent's, like an inline edit's. */
  peerOf(doc: Y.Doc): AgentPeer;
  createFile(path: string): ({ ok: true; fileId: string }) | { ok: false; message: string };
  deleteFile(path: string): Outcome;
  moveFile(from: string, to: string): Outcome;
  /** The text of the file when the model last read it in this thread, if it did. */
  lastRead(fileId: string): string | undefined;
}

export interface PatchListener {
  /** A file's live +/− counts changed (or it was created, deleted, moved). */
  changed(change: ThreadFileChange): void;
  /** The agent wrote in a file; `caret` (relative position JSON) is where it writes next. */
  wrote(fileId: string, caret: Record<string, unknown>): void;
}

/** A line of a hunk received before the hunk was placed. */
type Item = { kind: 'context' | 'removed' | 'added'; text: string };

interface FileState {
  kind: 'add' | 'delete' | 'update';
  path: string;
  moveTo?: string;
  fileId: string | null;
  doc: Y.Doc | null;
  /** Where the next hunk of this file may start (after the previous one's old lines). */
  from: number;
  failed: boolean;
  hunks: number;
}

/** A placed hunk, writing into its file. */
interface LiveHunk {
  applier: EditApplier;
  /** The document from the hunk's start to its end, as it was when the hunk was placed. */
  original: string;
  /** How far into `original` the hunk's lines have reached. */
  cursor: number;
  ops: DiffOp[];
  /** The change being written: the removed lines so far, and the diff of the added text against them. */
  removed: string;
  diff: StreamingDiff | null;
  /** Added text given to `diff`, and how much of it the diff has committed (the rest is provisional). */
  pushed: string;
  committed: number;
  /** The last added text stopped inside a line. */
  midLine: boolean;
  added: number;
  removedLines: number;
}

interface HunkState {
  number: number;
  line: number;
  header?: string;
  oldLines: string[];
  items: Item[];
  /** Old lines when placing was last tried (ambiguous then: wait for more). */
  triedAt: number;
  live: LiveHunk | null;
  failed: boolean;
}

const sameLine = (a: string, b: string) => a === b || a.trim() === b.trim();
const countLines = (text: string) => text.split('\n').length - 1;

/**
 * Streams a V4A patch into live documents while the model writes it (issue 23, decision 0022).
 * A hunk is placed by content as soon as its old lines known so far match exactly once (at its
 * first added text, or later if they are ambiguous); from then on its lines map straight to edit
 * ops — context keeps, removed lines delete, added text goes through a stream-diff against the
 * removed lines it replaces — applied by the agent's peer one transaction per push, following
 * characters by Yjs id, so people typing meanwhile keep their text. A hunk that cannot be placed,
 * that matches twice, or whose later lines turn out not to match, leaves its file as it was, and
 * the failure is reported (to the model and in the thread).
 */
export class PatchStream {
  private readonly reader = new PatchReader();
  private file: FileState | null = null;
  private hunk: HunkState | null = null;
  /** Per file touched: what the patch did, live. */
  readonly changes = new Map<string, ThreadFileChange>();
  readonly failures: string[] = [];
  /** Where an interruption left a hunk half-written (see `noteCut`). */
  private readonly cuts: string[] = [];
  private complete = false;
  private stopped = false;
  /** The provisional text the listener was last told of. */
  private shownProvisional = '';

  constructor(
    private readonly turnId: string,
    private readonly target: PatchTarget,
    private readonly listener: PatchListener,
    /** Per doc, the turn's hunk counter: shared by the turn's patches, so their hunks number on. */
    private readonly seqs = new WeakMap<Y.Doc, { next: number }>(),
  ) {}

  /** Whether `*** End Patch` was read. */
  get ended(): boolean {
    return this.complete;
  }

  push(text: string): void {
    if (this.stopped) return;
    for (const event of this.reader.push(text)) this.handle(event);
    this.applyPending();
  }

  /** The patch is all there: a hunk still open or an unterminated patch is an error. */
  finish(): void {
    if (this.stopped) return;
    for (const event of this.reader.finish()) this.handle(event);
    this.applyPending();
    this.stopped = true;
  }

  /**
   * The generation stopped (Esc, a steer, a failure): what was applied stays, the hunk being
   * written keeps what it wrote and the rest of its original, hunks not placed yet apply nothing.
   */
  interrupt(): void {
    if (this.stopped) return;
    this.stopped = true;
    const live = this.hunk?.live;
    if (live) {
      const midLine = live.midLine;
      // An added line cut mid-way is ended with its line break: glued to the next original
      // line it would turn that line into something no one wrote (half a comment, say).
      if (live.midLine) this.liveAdded(live, '\n');
      if (live.diff) live.ops.push(...live.diff.finish({ keepRest: true }));
      live.diff = null;
      live.removed = '';
      this.flushOps(live);
      live.applier.finish();
      this.noteCut(live, midLine);
    }
    this.hunk = null;
  }

  /**
   * A hunk cut off while it was written stays as it is, a half-written line included: the model
   * continuing after a steer is shown where, and the lines around it as they now read, so it
   * finishes or fixes that text instead of writing past it (issue 33).
   */
  private noteCut(live: LiveHunk, midLine: boolean): void {
    const file = this.file;
    const doc = file?.doc;
    if (!file || !doc || live.applier.hunkIds.length === 0) return;
    const text = doc.getText(FILE_TEXT_KEY).toString();
    const lines = text.split('\n');
    // The caret is where the next original line starts: the hunk's last line is the one above.
    const caretLine = text.slice(0, live.applier.insertionIndex()).split('\n').length;
    const from = Math.max(0, caretLine - 4);
    const to = Math.min(lines.length, caretLine + 2);
    const excerpt = lines.slice(from, to).map((line, i) => `${from + i + 1}| ${line}`).join('\n');
    const how = midLine ? `in the middle of a line (line ${caretLine - 1} ends where you stopped)` : `after line ${caretLine - 1}`;
    this.cuts.push(
      `${file.path}: hunk ${this.hunk?.number ?? '?'} was cut off ${how}. What it wrote is kept in the file as it is; the rest of that hunk and of the patch was not applied. Lines ${from + 1}-${to} now read:\n${excerpt}`,
    );
  }

  /**
   * Added text that arrived but the diff has not committed yet (it waits to see how it aligns
   * with the removed lines): shown after the agent's cursor, as inline edits show theirs (0020).
   */
  get provisional(): string {
    const live = this.hunk?.live;
    return live && !this.stopped ? live.pushed.slice(live.committed) : '';
  }

  /** The files the patch changed (a hunk placed but interrupted before it changed anything is not one). */
  changed(): ThreadFileChange[] {
    return [...this.changes.values()].filter((change) => change.added > 0 || change.removed > 0 || change.created || change.deleted);
  }

  /** What the patch did, for the model: one line per file, then every failure. */
  summary(): string {
    const lines = this.changed().map((change) => {
      const what = change.created ? 'created' : change.deleted ? 'deleted' : 'updated';
      return `${what} ${change.path} (+${change.added} -${change.removed})`;
    });
    if (lines.length === 0 && this.failures.length === 0) lines.push('The patch changed nothing.');
    return [...lines, ...this.cuts, ...this.failures].join('\n');
  }

  private handle(event: PatchEvent): void {
    switch (event.type) {
      case 'file-start':
        return this.startFile(event.kind, event.path, event.moveTo, event.line);
      case 'hunk-start':
        this.hunk = { number: (this.file ? ++this.file.hunks : 1), line: event.line, header: event.header, oldLines: [], items: [], triedAt: -1, live: null, failed: !this.file || this.file.failed };
        if (this.file?.kind === 'add' && !this.hunk.failed) this.placeAt(this.file, this.hunk, 0);
        return;
      case 'context':
      case 'removed':
        return this.oldLine(event.type, event.text.replace(/\n$/, ''));
      case 'added':
        return this.added(event.text);
      case 'hunk-end':
        return this.endHunk(event.endOfFile);
      case 'file-end':
        return this.endFile();
      case 'end':
        this.complete = true;
        return;
      case 'error':
        this.abandonHunk(`The patch is malformed at its line ${event.line}: ${event.message}`);
        this.failures.push(`The patch is malformed at its line ${event.line}: ${event.message} Everything before that line was applied; nothing after it.`);
        return;
    }
  }

  private startFile(kind: FileState['kind'], path: string, moveTo: string | undefined, line: number): void {
    const file: FileState = { kind, path, moveTo, fileId: this.target.fileIdAt(path), doc: null, from: 0, failed: false, hunks: 0 };
    this.file = file;
    const refuse = (message: string) => {
      file.failed = true;
      this.failures.push(`${path} (patch line ${line}): ${message} Nothing was changed in it.`);
    };
    if (kind === 'add') {
      if (file.fileId !== null) return refuse('it already exists; use *** Update File to change it.');
      const created = this.target.createFile(path);
      if (!created.ok) return refuse(created.message);
      file.fileId = created.fileId;
      file.doc = this.target.docOf(created.fileId);
      this.noteChange(file, { created: true, line: 1 });
      return;
    }
    if (file.fileId === null) return refuse('there is no such file; use *** Add File to create it.');
    file.doc = this.target.docOf(file.fileId);
    if (!file.doc) return refuse('the file is gone.');
    if (kind === 'delete') {
      const lines = countLines(file.doc.getText(FILE_TEXT_KEY).toString());
      const deleted = this.target.deleteFile(path);
      if (!deleted.ok) return refuse(deleted.message);
      this.noteChange(file, { deleted: true, removed: lines, line: 1 });
      file.doc = null;
    }
  }

  private endFile(): void {
    const file = this.file;
    this.file = null;
    if (!file || file.failed || !file.moveTo || file.fileId === null) return;
    const moved = this.target.moveFile(file.path, file.moveTo);
    if (!moved.ok) {
      this.failures.push(`${file.path} could not be moved to ${file.moveTo}: ${moved.message} Its edits were applied where it is.`);
      return;
    }
    const change = this.changes.get(file.fileId);
    if (change) this.setChange({ ...change, path: file.moveTo });
  }

  private oldLine(kind: 'context' | 'removed', text: string): void {
    const hunk = this.hunk;
    if (!hunk || hunk.failed) return;
    if (hunk.live) return this.liveOld(hunk, kind, text);
    hunk.oldLines.push(text);
    hunk.items.push({ kind, text });
  }

  private added(text: string): void {
    const hunk = this.hunk;
    if (!hunk || hunk.failed) return;
    if (hunk.live) return this.liveAdded(hunk.live, text);
    hunk.items.push({ kind: 'added', text });
    // With no old line yet there is nothing to place it by ([R12]'s "at the end" is for a hunk
    // that has none at all): the lines after the added ones will say where it goes.
    if (hunk.oldLines.length === 0 || hunk.triedAt === hunk.oldLines.length) return;
    hunk.triedAt = hunk.oldLines.length;
    // Placed as soon as the old lines so far match once; ambiguous: wait for more of them.
    this.tryPlace(hunk, false, false);
  }

  private endHunk(endOfFile: boolean): void {
    const hunk = this.hunk;
    const file = this.file;
    if (!hunk || !file) return;
    if (!hunk.failed && !hunk.live) this.tryPlace(hunk, true, endOfFile);
    const live = hunk.live;
    if (live) {
      this.closeChange(live);
      this.flushOps(live);
      live.applier.finish();
      file.from = live.applier.insertionIndex();
    }
    this.hunk = null;
  }

  /** Places the hunk by its old lines so far (`final`: all of them); reports a failure when final or not found. */
  private tryPlace(hunk: HunkState, final: boolean, endOfFile: boolean): void {
    const file = this.file!;
    const doc = file.doc;
    if (!doc) return this.failHunk(hunk, 'the file is gone.');
    const text = doc.getText(FILE_TEXT_KEY).toString();
    const found: LocateResult = locateHunk(text, { header: hunk.header, oldLines: hunk.oldLines, endOfFile: final && endOfFile }, file.from);
    if (found.ok) return this.placeAt(file, hunk, found.start, found.firstLine);
    if (found.reason === 'ambiguous' && !final) return;
    const read = this.target.lastRead(file.fileId!);
    const changed = read !== undefined && read !== text ? ' The file changed since you last read it: read it again.' : '';
    const why =
      found.reason === 'ambiguous'
        ? `its old lines match ${found.candidateLines.length} places (lines ${found.candidateLines.map((at: number) => at + 1).join(', ')}); add context lines or an @@ line to tell them apart.`
        : found.what === 'header'
          ? `its @@ line "${hunk.header}" is not in the file.`
          : 'its context and removed lines are not in the file.';
    this.failHunk(hunk, why + changed);
  }

  private placeAt(file: FileState, hunk: HunkState, start: number, firstLine = 0): void {
    const doc = file.doc!;
    const text = doc.getText(FILE_TEXT_KEY).toString();
    let seq = this.seqs.get(doc);
    if (!seq) this.seqs.set(doc, (seq = { next: 0 }));
    const original = text.slice(start);
    const applier = new EditApplier(this.target.peerOf(doc), this.turnId, original, start, seq);
    hunk.live = { applier, original, cursor: 0, ops: [], removed: '', diff: null, pushed: '', committed: 0, midLine: false, added: 0, removedLines: 0 };
    const leading = hunk.items.findIndex((item) => item.kind !== 'context');
    const line = firstLine + 1 + (leading === -1 ? hunk.items.length : leading);
    const change = this.changes.get(file.fileId!);
    if (!change || change.line > line || (change.added === 0 && change.removed === 0)) this.noteChange(file, { line });
    const items = hunk.items;
    hunk.items = [];
    for (const item of items) {
      if (!hunk.live) return;
      if (item.kind === 'added') this.liveAdded(hunk.live, item.text);
      else this.liveOld(hunk, item.kind, item.text);
    }
  }

  private liveOld(hunk: HunkState, kind: 'context' | 'removed', text: string): void {
    const live = hunk.live!;
    // A context line ends the change before it; a removed line after added text starts a new one.
    if (kind === 'context' || live.diff) this.closeChange(live);
    const lineEnd = live.original.indexOf('\n', live.cursor);
    const end = lineEnd === -1 ? live.original.length : lineEnd + 1;
    const docLine = live.original.slice(live.cursor, end);
    if (live.cursor >= live.original.length || !sameLine(docLine.replace(/\n$/, ''), text)) {
      return this.abandonHunk(`its line "${text.slice(0, 80)}" is not where the lines before it are in the file.`);
    }
    live.cursor = end;
    if (kind === 'context') {
      live.ops.push({ type: 'keep', length: docLine.length });
    } else {
      live.removed += docLine;
      live.removedLines++;
      this.bump(0, 1);
    }
  }

  private liveAdded(live: LiveHunk, text: string): void {
    live.diff ??= new StreamingDiff(live.removed, { maxPending: 96 });
    const ops = live.diff.push(text);
    live.pushed += text;
    for (const op of ops) live.committed += op.type === 'insert' ? op.text.length : op.type === 'keep' ? op.length : 0;
    live.ops.push(...ops);
    live.midLine = !text.endsWith('\n');
    const lines = countLines(text);
    live.added += lines;
    if (lines > 0) this.bump(lines, 0);
  }

  /** Ends the change being written: the removed lines the added text did not keep are deleted. */
  private closeChange(live: LiveHunk): void {
    if (live.diff) live.ops.push(...live.diff.finish());
    else if (live.removed) live.ops.push({ type: 'delete', length: live.removed.length });
    live.diff = null;
    live.removed = '';
    live.pushed = '';
    live.committed = 0;
  }

  private applyPending(): void {
    const live = this.hunk?.live;
    if (live) this.flushOps(live);
  }

  private flushOps(live: LiveHunk): void {
    const provisional = this.provisional;
    if (live.ops.length === 0 && provisional === this.shownProvisional) return;
    const ops = live.ops;
    live.ops = [];
    if (ops.length) live.applier.apply(ops);
    // The cursor moves with the text, and carries what the diff still holds (0020): a rewrite
    // shows its new lines while the diff waits to see which removed ones they keep.
    this.shownProvisional = provisional;
    const fileId = this.file?.fileId;
    if (fileId) this.listener.wrote(fileId, live.applier.caret());
  }

  /** A hunk that applies nothing: what it wrote so far is taken back, and the model is told. */
  private abandonHunk(why: string): void {
    const hunk = this.hunk;
    if (!hunk || hunk.failed) return;
    const live = hunk.live;
    if (live) {
      live.ops = [];
      live.applier.finish();
      this.takeBack(live);
    }
    this.failHunk(hunk, why);
  }

  private takeBack(live: LiveHunk): void {
    const doc = this.file?.doc;
    if (!doc || live.applier.hunkIds.length === 0) return;
    const ids = new Set(live.applier.hunkIds);
    reviewHunks(doc, doc.getText(FILE_TEXT_KEY), (id) => ids.has(id), 'reject', GATEWAY_ORIGIN);
    // Not the reviewer's rejection: the records go, so the next prompt does not report them.
    doc.transact(() => ids.forEach((id) => hunksOf(doc).delete(id)), GATEWAY_ORIGIN);
    this.bump(-live.added, -live.removedLines);
  }

  private failHunk(hunk: HunkState, why: string): void {
    hunk.failed = true;
    hunk.live = null;
    const path = this.file?.path ?? '?';
    this.failures.push(`Hunk ${hunk.number} of ${path} (patch line ${hunk.line}) was not applied: ${why}`);
  }

  private bump(added: number, removed: number): void {
    const fileId = this.file?.fileId;
    const change = fileId ? this.changes.get(fileId) : undefined;
    if (change) this.setChange({ ...change, added: change.added + added, removed: change.removed + removed });
  }

  private noteChange(file: FileState, fields: Partial<ThreadFileChange>): void {
    const previous = this.changes.get(file.fileId!);
    this.setChange({ path: file.path, fileId: file.fileId!, added: 0, removed: 0, line: 1, ...previous, ...fields });
  }

  private setChange(change: ThreadFileChange): void {
    this.changes.set(change.fileId, change);
    this.listener.changed(change);
  }
}
