import type { FlintClient } from '@flint/client';
import type * as Y from 'yjs';
import { create } from 'zustand';
import { fetchHeadText, fetchProject, type GitChange, type GitFileStatus, type ProjectInfo } from '../api/projectApi';
import { isBinaryEntry } from '../project/binaryFiles';
import { debounce } from '../project/debounce';
import { gitMarks, noGitMarks, sameProjectInfo, type GitMarks } from '../project/gitMarks';
import { linkCredentials as credentials } from './connectionStore';
import { openFile, openFileById, requestEditorFocus, useWorkspace } from './workspaceStore';

/** A file compared with HEAD in the diff editor. */
export interface DiffView {
  path: string;
  /** How git sees it; null once it is no longer changed (committed, or changed back). */
  status: GitFileStatus | null;
  /** The live file; null for a file deleted since HEAD (its right side is empty). */
  fileId: string | null;
  /** The file at HEAD: undefined until it is read, null when HEAD has no such file. */
  head: string | null | undefined;
  /** Why HEAD's text could not be read, as a sentence. */
  error: string | null;
}

interface ProjectState {
  /** What the gateway last said of the workspace's folder and git; null until it answered. */
  info: ProjectInfo | null;
  /** The tree's marks for `info.git`, computed once per answer. */
  marks: GitMarks;
  /** The sidebar shows the Changes view instead of the file tree. */
  changesOpen: boolean;
  /** Bumped to move the keyboard into the Changes view. */
  changesFocusRequest: number;
  diff: DiffView | null;
  /** Bumped to move the keyboard into the diff's right side once it shows. */
  diffFocusRequest: number;
}

export const useProject = create<ProjectState>(() => ({
  info: null,
  marks: noGitMarks,
  changesOpen: false,
  changesFocusRequest: 0,
  diff: null,
  diffFocusRequest: 0,
}));

export function selectGit(state: ProjectState): ProjectInfo['git'] {
  return state.info?.git ?? null;
}

export function selectChanges(state: ProjectState): readonly GitChange[] {
  return state.info?.git?.files ?? noChanges;
}
const noChanges: readonly GitChange[] = [];

/** Git's answer changes when the gateway writes files to disk, a little after an edit: ask after a pause. */
export const gitRefreshDelayMs = 1_000;
/** …and now and then while edits never pause (the agent streaming into a file). */
const gitRefreshMaxWaitMs = 5_000;

let answerSequence = 0;
/** A failing /project is said once per run of failures, not after every edit. */
let failing = false;

/** Asks the gateway what git sees now; a slower earlier answer never overwrites a later one. */
export async function refreshProject(): Promise<void> {
  const auth = credentials();
  if (!auth) return;
  refresh.cancel();
  const mine = ++answerSequence;
  const result = await fetchProject(auth.workspaceId, auth.token);
  if (mine !== answerSequence) return;
  if (!result.ok) {
    // A gateway without folder projects, or one that is restarting: no marks is the right look.
    if (!failing) console.warn(`Flint: could not read the project's git status: ${result.message}`);
    failing = true;
    return;
  }
  failing = false;
  const info = result.value;
  // Most answers repeat the last one: keep the same objects, so the tree does not redraw.
  if (!sameProjectInfo(useProject.getState().info, info)) {
    useProject.setState((state) => {
      const status = info.git?.files.find((f) => f.path === state.diff?.path)?.status ?? null;
      return {
        info,
        marks: gitMarks(info.git?.files ?? []),
        diff: info.git && state.diff ? { ...state.diff, status } : null,
        changesOpen: info.git ? state.changesOpen : false,
      };
    });
  }
  // A commit moves HEAD without changing any file here; HEAD's text is read again with every answer.
  const diff = useProject.getState().diff;
  if (diff) void loadHead(diff.path);
}

const refresh = debounce(() => void refreshProject(), gitRefreshDelayMs, gitRefreshMaxWaitMs);

/** Asks again after things have been quiet for a second. */
export function scheduleProjectRefresh(): void {
  refresh.schedule();
}

const watchedDocs = new Map<Y.Doc, () => void>();

/** Counts changes to an open file's document (anyone's) as a reason to ask git again. */
export function watchFileDoc(doc: Y.Doc): void {
  if (watchedDocs.has(doc)) return;
  const onUpdate = () => scheduleProjectRefresh();
  doc.on('update', onUpdate);
  watchedDocs.set(doc, () => doc.off('update', onUpdate));
}

export function unwatchFileDoc(doc: Y.Doc): void {
  watchedDocs.get(doc)?.();
  watchedDocs.delete(doc);
}

/**
 * Reads git's view when the workspace opens and again after the tree changes, after a reconnect
 * (the gateway may have restarted) and when the tab comes back into view (someone may have
 * committed in a terminal meanwhile).
 */
export function bindProject(client: FlintClient): void {
  void refreshProject();
  useWorkspace.subscribe((state, previous) => {
    if (state.entries !== previous.entries) scheduleProjectRefresh();
    const diff = useProject.getState().diff;
    if (!diff) return;
    // The diff is of the file on screen: another file, or this one gone, ends it.
    const gone = diff.fileId !== null && !state.pathById.has(diff.fileId);
    const switched = state.activeFileId !== previous.activeFileId && state.activeFileId !== diff.fileId;
    if (gone || switched) closeDiff();
  });
  let wasOpen = client.status.kind === 'open';
  client.onStatus((status) => {
    if (status.kind === 'open' && !wasOpen) void refreshProject();
    wasOpen = status.kind === 'open';
  });
  if (typeof document !== 'undefined') {
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'visible') scheduleProjectRefresh();
    });
  }
}

export function setChangesOpen(changesOpen: boolean): void {
  if (changesOpen && selectGit(useProject.getState()) === null) return;
  useProject.setState((state) => ({ changesOpen, changesFocusRequest: state.changesFocusRequest + (changesOpen ? 1 : 0) }));
  if (changesOpen) void refreshProject();
}

/** Ctrl/Cmd-Shift-G and the top bar's button; false when there is no git to show. */
export function toggleChanges(): boolean {
  if (selectGit(useProject.getState()) === null) return false;
  setChangesOpen(!useProject.getState().changesOpen);
  return true;
}

/**
 * Compares a changed file with HEAD. A file that still exists is opened in its tab first: the
 * diff's right side is that tab's live model. A binary file has no text to compare: it opens.
 */
export function openDiff(path: string, options: { focus?: boolean } = {}): void {
  const { entries } = useWorkspace.getState();
  const entry = entries.get(path);
  if (isBinaryEntry(entry)) {
    closeDiff();
    openFile(path);
    return;
  }
  const fileId = entry?.kind === 'file' ? entry.fileId : null;
  if (fileId !== null) openFileById(fileId);
  const status = selectChanges(useProject.getState()).find((change) => change.path === path)?.status ?? null;
  const current = useProject.getState().diff;
  const focus = options.focus ? 1 : 0;
  if (current?.path === path && current.fileId === fileId) {
    useProject.setState((state) => ({ diffFocusRequest: state.diffFocusRequest + focus }));
    return;
  }
  useProject.setState((state) => ({ diff: { path, status, fileId, head: undefined, error: null }, diffFocusRequest: state.diffFocusRequest + focus }));
  void loadHead(path);
}

async function loadHead(path: string): Promise<void> {
  const auth = credentials();
  if (!auth) return;
  const result = await fetchHeadText(auth.workspaceId, auth.token, path);
  useProject.setState((state) => {
    if (state.diff?.path !== path) return state;
    // Without HEAD's text there is nothing to compare: an empty left side would say "all new".
    if (!result.ok) return { diff: { ...state.diff, error: `Could not read ${path} at HEAD: ${result.message}` } };
    return state.diff.head === result.value && state.diff.error === null ? state : { diff: { ...state.diff, head: result.value, error: null } };
  });
}

/** Back to the editor; `focusEditor` when a person closed it (Esc, the close button). */
export function closeDiff(options: { focusEditor?: boolean } = {}): void {
  if (useProject.getState().diff === null) return;
  useProject.setState({ diff: null });
  // The editor is hidden under the diff until React draws this change: focus it after that.
  if (options.focusEditor) requestAnimationFrame(() => requestEditorFocus());
}
