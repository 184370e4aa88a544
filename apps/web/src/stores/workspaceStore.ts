import type { FlintClient } from '@flint/client';
import {
  baseName,
  describePathError,
  INDEX_ENTRIES_KEY,
  isWithin,
  validatePath,
  type IndexEntry,
} from '@flint/protocol';
import { create } from 'zustand';
import { loadLayout, saveLayout } from '../memory/workspaceLayout';
import { isBinaryEntry } from '../project/binaryFiles';
import { requireClient, useConnection } from './connectionStore';
import { allTabs, closeInGroup, focusGroup, keepFiles, openInGroup, singleGroup, splitRight, type EditorGroup, type GroupLayout } from './editorGroups';

/** A sentence in the corner: a refused operation (error), a partial success (warn), work under way or done (info). */
export interface NoticeMessage {
  text: string;
  tone: 'error' | 'warn' | 'info';
  /** Work under way (an upload): it stays until something replaces it. */
  busy?: boolean;
}

interface WorkspaceState {
  /** The file tree as the gateway wrote it: path → entry. Replaced (never mutated) on change. */
  entries: ReadonlyMap<string, IndexEntry>;
  /** fileId → current path; a rename keeps the id, so tabs follow their file. */
  pathById: ReadonlyMap<string, string>;
  /** Files with no document (binary files of a folder project): shown, never opened as text. */
  binaryFileIds: ReadonlySet<string>;
  indexSynced: boolean;
  /** The editor groups side by side (editorGroups); one when nothing is split. */
  groups: readonly EditorGroup[];
  /** The group the keyboard is in. */
  focusedGroup: number;
  /** Every open tab of every group, by file id, each once: the files the editors keep loaded. */
  tabs: readonly string[];
  /** The focused group's active file: what the status bar, the agent and the palette act on. */
  activeFileId: string | null;
  /** The last failed file operation, or an upload's progress and result. */
  notice: NoticeMessage | null;
  /** Bumped to move keyboard focus into the editor once the active file shows. */
  editorFocusRequest: number;
  /** A keyboard shortcut asked the tree to start naming a new entry. */
  createRequest: { kind: 'file' | 'folder'; nonce: number } | null;
  /** Something outside the editor (the agent panel, Problems) asked it to show a line of a file. */
  revealRequest: { fileId: string; line: number; column?: number; nonce: number } | null;
}

export const useWorkspace = create<WorkspaceState>(() => ({
  entries: new Map(),
  pathById: new Map(),
  binaryFileIds: new Set(),
  indexSynced: false,
  ...withLayout(singleGroup),
  notice: null,
  createRequest: null,
  revealRequest: null,
  editorFocusRequest: 0,
}));

/** The store fields a group layout sets: the groups, and what is derived from them. */
function withLayout(layout: GroupLayout): Pick<WorkspaceState, 'groups' | 'focusedGroup' | 'tabs' | 'activeFileId'> {
  return { groups: layout.groups, focusedGroup: layout.focusedGroup, tabs: allTabs(layout), activeFileId: layout.groups[layout.focusedGroup]?.activeFileId ?? null };
}

/** Changes the group layout; derived fields follow, and nothing changes when the layout did not. */
export function updateGroups(change: (layout: GroupLayout) => GroupLayout, extra: (state: WorkspaceState) => Partial<WorkspaceState> = () => ({})): void {
  useWorkspace.setState((state) => {
    const before: GroupLayout = { groups: state.groups, focusedGroup: state.focusedGroup };
    const after = change(before);
    if (after === before) return extra(state);
    const next = withLayout(after);
    // Keep the array when its content is the same: subscribers compare by reference.
    if (next.tabs.length === state.tabs.length && next.tabs.every((id, i) => id === state.tabs[i])) next.tabs = state.tabs;
    return { ...next, ...extra(state) };
  });
}

export function selectActivePath(state: WorkspaceState): string | null {
  return state.activeFileId === null ? null : (state.pathById.get(state.activeFileId) ?? null);
}

/** Mirrors the index doc into the store for as long as the client lives. */
export function bindWorkspace(client: FlintClient): void {
  const map = client.index.doc.getMap<IndexEntry>(INDEX_ENTRIES_KEY);
  const refresh = () => {
    const entries = new Map<string, IndexEntry>();
    const pathById = new Map<string, string>();
    const binaryFileIds = new Set<string>();
    for (const [path, entry] of map.entries()) {
      entries.set(path, entry);
      if (entry.kind === 'file') pathById.set(entry.fileId, path);
      if (entry.kind === 'file' && isBinaryEntry(entry)) binaryFileIds.add(entry.fileId);
    }
    // A deleted file's tabs close, as if closed by hand.
    useWorkspace.setState({ entries, pathById, binaryFileIds });
    updateGroups((layout) => keepFiles(layout, (id) => pathById.has(id)));
  };
  map.observe(refresh);
  refresh();
  void client.index.whenSynced().then(() => {
    refresh();
    useWorkspace.setState({ indexSynced: true });
    if (!restoreTabs()) openDefaultFile();
    rememberTabs();
  });
}

/** The tabs this browser had open in this workspace, where their files still exist; false when none. */
function restoreTabs(): boolean {
  const workspaceId = useConnection.getState().workspaceId;
  if (workspaceId === null) return false;
  const layout = loadLayout(workspaceId);
  const { entries } = useWorkspace.getState();
  const idOf = (path: string) => {
    const entry = entries.get(path);
    return entry?.kind === 'file' && !isBinaryEntry(entry) ? entry.fileId : null;
  };
  const groups: EditorGroup[] = [];
  for (const saved of layout.groups) {
    const tabs = [...new Set(saved.tabs.map(idOf).filter((id): id is string => id !== null))];
    if (tabs.length === 0) continue;
    const active = saved.active === null ? null : idOf(saved.active);
    const activeFileId = active !== null && tabs.includes(active) ? active : (tabs[0] ?? null);
    groups.push({ tabs, activeFileId, recent: activeFileId === null ? [] : [activeFileId] });
  }
  if (groups.length === 0) return false;
  updateGroups(() => ({ groups, focusedGroup: Math.min(layout.focusedGroup, groups.length - 1) }));
  return true;
}

let stopRememberingTabs: (() => void) | null = null;

/** Keeps the open tabs (by path: ids are the gateway's, paths are what a person recognises) for the next load. */
function rememberTabs(): void {
  const workspaceId = useConnection.getState().workspaceId;
  if (workspaceId === null) return;
  let saved = '';
  const save = (state: WorkspaceState) => {
    const pathOf = (id: string | null) => (id === null ? null : (state.pathById.get(id) ?? null));
    const groups = state.groups.map((group) => ({ tabs: group.tabs.map(pathOf).filter((p): p is string => p !== null), active: pathOf(group.activeFileId) }));
    const layout = { groups, focusedGroup: state.focusedGroup };
    // pathById is rebuilt on every change of the tree: write only when the tabs changed.
    const json = JSON.stringify(layout);
    if (json === saved) return;
    saved = json;
    saveLayout(workspaceId, layout);
  };
  save(useWorkspace.getState());
  stopRememberingTabs?.();
  stopRememberingTabs = useWorkspace.subscribe((state, previous) => {
    if (state.groups !== previous.groups || state.focusedGroup !== previous.focusedGroup || state.pathById !== previous.pathById) save(state);
  });
}

/** README.md, else the first TypeScript file under src/, else any file: never an empty editor. */
function openDefaultFile(): void {
  const { entries, activeFileId } = useWorkspace.getState();
  if (activeFileId !== null) return;
  const files = [...entries].filter(([, e]) => e.kind === 'file' && !isBinaryEntry(e)).map(([path]) => path).sort();
  const choice =
    files.find((p) => p === 'README.md') ??
    files.find((p) => p.startsWith('src/') && /\.tsx?$/.test(p)) ??
    files[0];
  if (choice !== undefined) openFile(choice);
}

/** Opens a file in a tab of the focused group (or shows its tab there); `focus` also moves the keyboard into the editor. */
export function openFile(path: string, options: { focus?: boolean } = {}): void {
  const entry = useWorkspace.getState().entries.get(path);
  if (entry?.kind !== 'file') return;
  openFileById(entry.fileId, options);
}

export function openFileById(fileId: string, options: { focus?: boolean } = {}): void {
  openFileInGroup(useWorkspace.getState().focusedGroup, fileId, options);
}

export function openFileInGroup(group: number, fileId: string, options: { focus?: boolean } = {}): void {
  if (!useWorkspace.getState().pathById.has(fileId)) return;
  updateGroups(
    (layout) => openInGroup(layout, group, fileId),
    (state) => ({ editorFocusRequest: state.editorFocusRequest + (options.focus ? 1 : 0) }),
  );
}

/** Opens a file and puts the editor's caret on a 1-based line (and column) of it, with the keyboard there. */
export function openFileAt(fileId: string, line: number, column?: number): void {
  openFileById(fileId, { focus: true });
  useWorkspace.setState((state) =>
    state.activeFileId === fileId ? { revealRequest: { fileId, line, column, nonce: (state.revealRequest?.nonce ?? 0) + 1 } } : state,
  );
}

/** Ctrl+1, Ctrl+2…: the keyboard into an editor group (a click in its editor does it too). */
export function focusEditorGroup(index: number, options: { focus?: boolean } = {}): void {
  updateGroups(
    (layout) => focusGroup(layout, index),
    (state) => (options.focus && index < state.groups.length ? { editorFocusRequest: state.editorFocusRequest + 1 } : {}),
  );
}

/** Ctrl/Cmd+\: the focused group's file in a new group to its right, with the keyboard there. */
export function splitEditor(): void {
  updateGroups((layout) => splitRight(layout, layout.focusedGroup));
}

/** Closes tabs of a group (the focused one by default); a split group left empty closes. */
export function closeTab(fileId: string, group = useWorkspace.getState().focusedGroup): void {
  closeTabs([fileId], group);
}

export function closeTabs(fileIds: Iterable<string>, group = useWorkspace.getState().focusedGroup): void {
  updateGroups((layout) => closeInGroup(layout, group, fileIds));
}

/** Moves the keyboard back into the editor (after a button outside it was clicked). */
export function requestEditorFocus(): void {
  useWorkspace.setState((state) => ({ editorFocusRequest: state.editorFocusRequest + 1 }));
}

export function requestCreate(kind: 'file' | 'folder'): void {
  useWorkspace.setState({ createRequest: { kind, nonce: Date.now() } });
}

export function showNotice(text: string, tone: NoticeMessage['tone'] = 'error', busy = false): void {
  useWorkspace.setState({ notice: { text, tone, busy } });
}

export function dismissNotice(): void {
  useWorkspace.setState({ notice: null });
}

/** Checks a path before asking the gateway; null when it may be sent. */
export function checkNewPath(path: string): string | null {
  const error = validatePath(path);
  if (error) return describePathError(error);
  if (useWorkspace.getState().entries.has(path) || isImpliedFolder(path)) return `"${path}" already exists.`;
  return null;
}

function isImpliedFolder(path: string): boolean {
  for (const key of useWorkspace.getState().entries.keys()) if (key.startsWith(path + '/')) return true;
  return false;
}

/** Resolves to null on success, or the sentence to show the user. */
async function runFileOp(op: Parameters<FlintClient['request']>[0]): Promise<string | null> {
  const result = await requireClient().request(op);
  return result.ok ? null : result.message;
}

/** For operations with no input field to show their error in. */
function notifyFailure(error: string | null): string | null {
  if (error !== null) showNotice(error);
  return error;
}

export async function createEntry(path: string, kind: 'file' | 'folder'): Promise<string | null> {
  const problem = checkNewPath(path);
  if (problem) return problem;
  const error = await runFileOp({ type: 'file.create', path, kind });
  if (error === null && kind === 'file') {
    // The index update travels before the result, so the entry is normally already here.
    openFile(path, { focus: true });
  }
  return error;
}

export async function renameEntry(from: string, to: string): Promise<string | null> {
  if (from === to) return null;
  const problem = checkNewPath(to);
  if (problem) return problem;
  return runFileOp({ type: 'file.rename', from, to });
}

/** Moves a file or folder into `folder` ('' is the workspace root). */
export async function moveEntry(path: string, folder: string): Promise<string | null> {
  if (isWithin(folder, path)) return null; // into itself: nothing sensible to do
  const to = folder === '' ? baseName(path) : `${folder}/${baseName(path)}`;
  if (to === path) return null;
  return notifyFailure(checkNewPath(to) ?? (await runFileOp({ type: 'file.rename', from: path, to })));
}

export async function deleteEntry(path: string): Promise<string | null> {
  return notifyFailure(await runFileOp({ type: 'file.delete', path }));
}
