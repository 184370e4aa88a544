/**
 * What a workspace looked like in this browser — open tabs (by path), the active one, the caret
 * in each file, the editor's font size — so a reload comes back to it. Per workspace, in this
 * browser's localStorage; not shared with collaborators.
 */
export interface WorkspaceLayout {
  tabs: string[];
  active: string | null;
  cursors: Record<string, { line: number; column: number }>;
  fontSize: number | null;
}

const keyOf = (workspaceId: string) => `flint.layout.${workspaceId}`;
const maxCursors = 200;

export function loadLayout(workspaceId: string, storage: Storage = localStorage): WorkspaceLayout {
  const empty: WorkspaceLayout = { tabs: [], active: null, cursors: {}, fontSize: null };
  try {
    const parsed = JSON.parse(storage.getItem(keyOf(workspaceId)) ?? 'null') as Partial<WorkspaceLayout> | null;
    if (!parsed || typeof parsed !== 'object') return empty;
    return {
      tabs: Array.isArray(parsed.tabs) ? parsed.tabs.filter((t): t is string => typeof t === 'string') : [],
      active: typeof parsed.active === 'string' ? parsed.active : null,
      cursors: parsed.cursors && typeof parsed.cursors === 'object' ? parsed.cursors : {},
      fontSize: typeof parsed.fontSize === 'number' && parsed.fontSize >= 6 && parsed.fontSize <= 72 ? parsed.fontSize : null,
    };
  } catch {
    // Unreadable: the workspace opens as it would the first time.
    return empty;
  }
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
