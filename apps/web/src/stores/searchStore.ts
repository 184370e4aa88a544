import type { SearchFileHits, SearchQuery } from '@flint/protocol';
import { create } from 'zustand';
import { debounce } from '../project/debounce';
import { requireClient, selectCanEdit, useConnection } from './connectionStore';
import { usePalette } from './paletteStore';
import { setChangesOpen, useProject } from './projectStore';
import { requestEditorFocus } from './workspaceStore';

/** What the last search found, as the panel shows it. */
export interface SearchOutcome {
  files: readonly SearchFileHits[];
  total: number;
  shown: number;
  filesSearched: number;
  stoppedAt: string | null;
  /** The query it answered: a replace applies to this one, not to what is typed since. */
  query: SearchQuery;
}

interface SearchState {
  open: boolean;
  /** Bumped to move the keyboard into the search input (Ctrl/Cmd+Shift+F while open). */
  focusRequest: number;
  query: SearchQuery;
  replacement: string;
  running: boolean;
  outcome: SearchOutcome | null;
  /** A sentence: the pattern cannot be used, the connection is gone, a replace was refused. */
  error: string | null;
  /** What the last replace did, in a sentence. */
  replaced: string | null;
  /** The last replace can still be undone (until the next one). */
  canUndo: boolean;
  replacing: boolean;
}

const emptyQuery: SearchQuery = { pattern: '', regex: false, matchCase: false, wholeWord: false, include: '', exclude: '' };

export const useSearch = create<SearchState>(() => ({
  open: false,
  focusRequest: 0,
  query: emptyQuery,
  replacement: '',
  running: false,
  outcome: null,
  error: null,
  replaced: null,
  canUndo: false,
  replacing: false,
}));

/** Ctrl/Cmd+Shift+F: opens the panel in the sidebar (over the tree) with the keyboard in it. */
export function openSearch(): void {
  setChangesOpen(false);
  usePalette.setState({ sidebarHidden: false });
  useSearch.setState((state) => ({ open: true, focusRequest: state.focusRequest + 1 }));
}

export function closeSearch(): void {
  useSearch.setState({ open: false });
  requestEditorFocus();
}

// Opening the Changes view takes the sidebar back from the search.
useProject.subscribe((state, previous) => {
  if (state.changesOpen && !previous.changesOpen && useSearch.getState().open) useSearch.setState({ open: false });
});

let sequence = 0;

/** Searches on the gateway: every file of the workspace, opened or not ([P36]). */
export async function runSearch(): Promise<void> {
  const query = useSearch.getState().query;
  const mine = ++sequence;
  if (!query.pattern) {
    useSearch.setState({ running: false, outcome: null, error: null });
    return;
  }
  useSearch.setState({ running: true });
  const answer = await requireClient().search(query);
  // A newer search answers for what is typed now; this one's answer ("busy", or stale) is dropped.
  if (mine !== sequence) return;
  if ('ok' in answer) useSearch.setState({ running: false, error: answer.message, outcome: null });
  else useSearch.setState({ running: false, error: null, outcome: { files: answer.files, total: answer.total, shown: answer.shown, filesSearched: answer.filesSearched, stoppedAt: answer.stoppedAt, query } });
}

const searchSoon = debounce(() => void runSearch(), 250);

export function setSearchQuery(change: Partial<SearchQuery>): void {
  useSearch.setState((state) => ({ query: { ...state.query, ...change }, replaced: null }));
  searchSoon.schedule();
}

/** Enter in the search input: no waiting for the pause. */
export function searchNow(): void {
  searchSoon.cancel();
  void runSearch();
}

export function setReplacement(replacement: string): void {
  useSearch.setState({ replacement });
}

/**
 * Replaces every match the panel shows, in those files, on the gateway: one change per file that
 * everyone sees at once ([P37]). Then searches again, so the panel shows what is left.
 */
export async function replaceAll(): Promise<void> {
  const { outcome, replacement } = useSearch.getState();
  if (!outcome || outcome.files.length === 0 || !selectCanEdit(useConnection.getState())) return;
  useSearch.setState({ replacing: true, replaced: null, error: null });
  const answer = await requireClient().replaceAll(outcome.query, replacement, outcome.files.map((file) => file.fileId));
  if ('ok' in answer) {
    useSearch.setState({ replacing: false, error: answer.message });
    return;
  }
  const files = `${answer.files} file${answer.files === 1 ? '' : 's'}`;
  useSearch.setState({ replacing: false, canUndo: answer.files > 0, replaced: `Replaced ${answer.replacements} match${answer.replacements === 1 ? '' : 'es'} in ${files}.` });
  await runSearch();
}

/** Takes the last replace back in every file it changed, as one step; what others typed since stays. */
export async function undoReplace(): Promise<void> {
  if (!useSearch.getState().canUndo) return;
  useSearch.setState({ replacing: true, canUndo: false });
  const answer = await requireClient().undoReplace();
  if ('ok' in answer) useSearch.setState({ replacing: false, error: answer.message });
  else useSearch.setState({ replacing: false, replaced: `Undid the replace in ${answer.files} file${answer.files === 1 ? '' : 's'}.` });
  await runSearch();
}
