import { FILE_TEXT_KEY, type SearchAnswer, type SearchFileHits, type SearchQuery, type SearchRequest } from '@flint/protocol';
import * as Y from 'yjs';
import type { Clock } from '../ports/Clock';
import type { Room, OpResult } from '../Room';
import { compileSearch, scanLines, type LineMatcher } from './searchFiles';
import { compileGlobs } from './pathGlobs';

/** Most matches one answer carries; the rest are counted ([P36]). */
export const maxShownMatches = 2000;
const previewChars = 200;
const previewLead = 40;

/** A replace's changes, one per file, kept so that its session can undo them ([P37]). */
interface DoneReplace {
  managers: Y.UndoManager[];
  /** Docs no one had open, kept loaded for the undo; freed when the replace is forgotten. */
  held: Array<{ room: Room; fileId: string }>;
}

type LineEdit = { index: number; was: string; text: string };

export type SearchOutcome = SearchAnswer | (OpResult & { ok: false; requestId: number });

/**
 * Search across files for the IDE ([P36]–[P38]): the same sliced RE2 scan as the agent's tool,
 * over every text file of the workspace — a folder project's files that no one opened included,
 * read from the store and freed again. One search per session: a new one ends the previous one,
 * as does the session's close.
 */
export class WorkspaceSearch {
  /** Each session's search and replace in flight, apart: a search never cuts a replace short. */
  private readonly inFlight = new Map<object, { run?: AbortController; replace?: AbortController }>();
  /** Each session's last replace: undoable until its next replace or its close. */
  private readonly lastReplace = new Map<object, DoneReplace>();

  constructor(private readonly clock: Pick<Clock, 'afterIo'>) {}

  async handle(message: SearchRequest, session: object, room: Room, mayWrite: boolean): Promise<SearchOutcome> {
    const { requestId } = message;
    if (message.type !== 'search.run' && !mayWrite) {
      return { ok: false, requestId, code: 'forbidden', message: 'Viewers can search but not replace; ask the owner for an editor link.' };
    }
    if (message.type === 'search.undo') return this.undo(requestId, session);
    const compiled = compileSearch({ query: message.query.pattern, regex: message.query.regex, matchCase: message.query.matchCase, wholeWord: message.query.wholeWord });
    if (!compiled.ok) return { ok: false, requestId, code: 'invalid_message', message: compiled.message };
    if (message.query.pattern === '') return { ok: false, requestId, code: 'invalid_message', message: 'Type something to search for.' };
    const kind = message.type === 'search.run' ? 'run' : 'replace';
    const slots = this.inFlight.get(session) ?? {};
    this.inFlight.set(session, slots);
    slots[kind]?.abort();
    const controller = new AbortController();
    slots[kind] = controller;
    try {
      const outcome = message.type === 'search.run' ? await this.run(requestId, message.query, compiled, room, controller.signal) : await this.replace(message, session, compiled, room, controller.signal);
      return controller.signal.aborted ? { ok: false, requestId, code: 'busy', message: 'A newer search took the place of this one.' } : outcome;
    } finally {
      if (slots[kind] === controller) delete slots[kind];
    }
  }

  sessionClosed(session: object): void {
    const slots = this.inFlight.get(session);
    slots?.run?.abort();
    slots?.replace?.abort();
    this.inFlight.delete(session);
    this.forget(session);
  }

  /**
   * Yjs undoes exactly the replace's own insertions and deletions, one transaction per file:
   * what collaborators typed since stays. A file deleted since is skipped.
   */
  private undo(requestId: number, session: object): SearchOutcome {
    const done = this.lastReplace.get(session);
    if (!done) return { ok: false, requestId, code: 'not_found', message: 'There is no replace of yours to undo.' };
    let files = 0;
    for (const manager of done.managers) {
      if (manager.doc.isDestroyed || manager.undoStack.length === 0) continue;
      manager.undo();
      files++;
    }
    this.forget(session);
    return { type: 'search.replaced', requestId, files, replacements: 0, stoppedAt: null };
  }

  private forget(session: object): void {
    const done = this.lastReplace.get(session);
    if (!done) return;
    for (const manager of done.managers) manager.destroy();
    for (const { room, fileId } of done.held) room.releaseDoc(fileId);
    this.lastReplace.delete(session);
  }

  private async run(requestId: number, query: SearchQuery, matcher: LineMatcher, room: Room, signal: AbortSignal): Promise<SearchAnswer> {
    const files: SearchFileHits[] = [];
    let total = 0;
    let shown = 0;
    let current: SearchFileHits | null = null;
    const paths = this.paths(room, query);
    const { stoppedAt } = await scanLines(
      { paths: paths.map(([path]) => path), read: this.reader(room), afterIo: (fn) => this.clock.afterIo(fn), signal },
      matcher,
      ({ path, index, line, searched }) => {
        const ranges = matcher.ranges(searched);
        total += ranges.length;
        for (const [start, end] of ranges) {
          if (shown >= maxShownMatches) break;
          if (current?.path !== path) files.push((current = { path, fileId: room.fileIdAt(path) ?? '', matches: [] }));
          const previewFrom = Math.max(0, start - previewLead);
          current.matches.push({ line: index, start, end, preview: line.slice(previewFrom, previewFrom + previewChars), previewFrom });
          shown++;
        }
      },
    );
    const filesSearched = stoppedAt === null ? paths.length : paths.findIndex(([path]) => path === stoppedAt);
    return { type: 'search.result', requestId, files, total, shown, filesSearched, stoppedAt };
  }

  /**
   * Each file's new text is worked out line by line in the scan's slices, then written in one
   * transaction per file — the changed part of changed lines only, so collaborators' cursors
   * elsewhere stay put.
   */
  private async replace(message: Extract<SearchRequest, { type: 'search.replace' }>, session: object, matcher: LineMatcher, room: Room, signal: AbortSignal): Promise<SearchAnswer> {
    this.forget(session);
    const done: DoneReplace = { managers: [], held: [] };
    const wanted = new Set(message.fileIds);
    const paths = this.paths(room, message.query).filter(([, fileId]) => wanted.has(fileId));
    let files = 0;
    let replacements = 0;
    let edits: LineEdit[] = [];
    const { stoppedAt } = await scanLines(
      { paths: paths.map(([path]) => path), read: (path) => this.text(room, path), afterIo: (fn) => this.clock.afterIo(fn), signal },
      matcher,
      ({ index, line, searched }) => {
        const count = matcher.ranges(searched).length;
        if (count === 0) return;
        replacements += count;
        edits.push({ index, was: line, text: matcher.replace(searched, message.replacement) + line.slice(searched.length) });
        return line.length;
      },
      (path) => {
        const manager = edits.length && !signal.aborted ? this.write(room, path, edits) : null;
        edits = [];
        if (manager) {
          files++;
          done.managers.push(manager);
          // Kept loaded while the replace can be undone: a freed doc would take its undo with it.
          const fileId = room.fileIdAt(path) ?? '';
          if (this.wasLoaded.get(room)?.delete(fileId)) done.held.push({ room, fileId });
        } else this.release(room, path);
      },
    );
    if (done.managers.length) this.lastReplace.set(session, done);
    return { type: 'search.replaced', requestId: message.requestId, files, replacements, stoppedAt };
  }

  /**
   * The scan yields between slices, so a collaborator may have typed in the file since its lines
   * were read: a line that is no longer what was read is left as it is now.
   */
  private write(room: Room, path: string, edits: LineEdit[]): Y.UndoManager | null {
    const fileId = room.fileIdAt(path);
    const live = fileId ? room.doc(fileId) : null;
    if (!live) return null;
    const text: Y.Text = live.doc.getText(FILE_TEXT_KEY);
    const origin = { replace: path };
    const manager = new Y.UndoManager(text, { trackedOrigins: new Set([origin]), captureTimeout: 0 });
    const lines = text.toString().split('\n');
    live.doc.transact(() => {
      // From the last line up, so earlier offsets stay true.
      let offset = lines.reduce((sum, line) => sum + line.length + 1, 0);
      let next = lines.length;
      for (const { index, was, text: replaced } of [...edits].reverse()) {
        if (lines[index] !== was) continue;
        while (next > index) offset -= lines[--next]!.length + 1;
        // Only what changed between the first and last match: text around it keeps its identity,
        // so a collaborator's caret (or insert) next to it stays where it was, through an undo too.
        let head = 0;
        while (head < was.length && head < replaced.length && was[head] === replaced[head]) head++;
        let tail = 0;
        while (tail < was.length - head && tail < replaced.length - head && was[was.length - 1 - tail] === replaced[replaced.length - 1 - tail]) tail++;
        if (was.length - head - tail > 0) text.delete(offset + head, was.length - head - tail);
        if (replaced.length - head - tail > 0) text.insert(offset + head, replaced.slice(head, replaced.length - tail));
      }
    }, origin);
    return manager;
  }

  /** The workspace's text files in path order, with the query's globs applied. */
  private paths(room: Room, query: SearchQuery): Array<[string, string]> {
    const include = compileGlobs(query.include);
    const exclude = compileGlobs(query.exclude);
    const paths: Array<[string, string]> = [];
    for (const [path, entry] of room.entries.entries()) {
      if (entry.kind !== 'file' || entry.binary) continue;
      if (include && !include(path)) continue;
      if (exclude?.(path)) continue;
      paths.push([path, entry.fileId]);
    }
    return paths.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  private reader(room: Room) {
    return (path: string) => {
      const text = this.text(room, path);
      this.release(room, path);
      return text;
    };
  }

  private readonly wasLoaded = new WeakMap<Room, Set<string>>();

  /** A file's text, loading its doc from the store when no one has it open. */
  private text(room: Room, path: string): string | null {
    const fileId = room.fileIdAt(path);
    if (!fileId) return null;
    const loaded = room.loaded(fileId) !== null;
    // A folder's file no one opened is read from its disk; no document is made for a search.
    if (!loaded && (room.entries.get(path) as { listed?: true } | undefined)?.listed) return room.textOf(fileId);
    const live = room.doc(fileId);
    if (!live) return null;
    if (!loaded) {
      let set = this.wasLoaded.get(room);
      if (!set) this.wasLoaded.set(room, (set = new Set()));
      set.add(fileId);
    }
    return live.doc.getText(FILE_TEXT_KEY).toString();
  }

  /** Frees a doc this search loaded, once it is done with it (a doc someone opened stays). */
  private release(room: Room, path: string): void {
    const fileId = room.fileIdAt(path);
    const set = this.wasLoaded.get(room);
    if (!fileId || !set?.delete(fileId)) return;
    room.releaseDoc(fileId);
  }
}
