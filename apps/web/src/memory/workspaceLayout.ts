/** One editor group's tabs (by path) and its active file. */
export interface SavedGroup {
  tabs: string[];
  active: string | null;
}

/**
 * What a workspace looked like in this browser — the editor groups with their tabs (by path)
 * and active files, the caret in each file — so a reload comes back to it. Per workspace, in this
 * browser's localStorage; not shared with collaborators. (The font size is the person's setting,
 * userSettings; a fontSize kept here by an older version is no longer read.)
 */
export interface WorkspaceLayout {
  groups: SavedGroup[];
  focusedGroup: number;
  cursors: Record<string, { line: number; column: number }>;
}

const keyOf = (workspaceId: string) => `flint.layout.${workspaceId}`;
const maxCursors = 200;

export function loadLayout(workspaceId: string, storage: Storage = localStorage): WorkspaceLayout {
  const empty: WorkspaceLayout = { groups: [], focusedGroup: 0, cursors: {} };
  try {
    const parsed = JSON.parse(storage.getItem(keyOf(workspaceId)) ?? 'null') as (Partial<WorkspaceLayout> & Partial<SavedGroup>) | null;
    if (!parsed || typeof parsed !== 'object') return empty;
    // Written before split editors: one group's tabs at the top level.
    const groups = Array.isArray(parsed.groups) ? parsed.groups.map(readGroup).filter((g): g is SavedGroup => g !== null) : [readGroup(parsed)].filter((g): g is SavedGroup => g !== null && g.tabs.length > 0);
    return {
      groups,
      focusedGroup: typeof parsed.focusedGroup === 'number' && Number.isInteger(parsed.focusedGroup) && parsed.focusedGroup >= 0 ? parsed.focusedGroup : 0,
      cursors: parsed.cursors && typeof parsed.cursors === 'object' ? parsed.cursors : {},
    };
  } catch {
    // Unreadable: the workspace opens as it would the first time.
    return empty;
  }
}

function readGroup(value: unknown): SavedGroup | null {
  if (!value || typeof value !== 'object') return null;
  const { tabs, active } = value as Partial<SavedGroup>;
  return {
    tabs: Array.isArray(tabs) ? tabs.filter((t): t is string => typeof t === 'string') : [],
    active: typeof active === 'string' ? active : null,
  };
}

export function saveLayout(workspaceId: string, change: Partial<WorkspaceLayout>, storage: Storage = localStorage): void {
  const layout = { ...loadLayout(workspaceId, storage), ...change };
  const paths = Object.keys(layout.cursors);
  if (paths.length > maxCursors) for (const path of paths.slice(0, paths.length - maxCursors)) delete layout.cursors[path];
  try {
    storage.setItem(keyOf(workspaceId), JSON.stringify(layout));
  } catch (error) {
    console.warn('Flint: could not remember the layout', error);
  }
}

/** Notes the caret of one file (kept newest last, so the oldest go first when trimmed). */
export function saveCursor(workspaceId: string, path: string, line: number, column: number, storage: Storage = localStorage): void {
  const { cursors } = loadLayout(workspaceId, storage);
  delete cursors[path];
  cursors[path] = { line, column };
  saveLayout(workspaceId, { cursors }, storage);
}
