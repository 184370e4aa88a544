/**
 * Editor groups, as in VS Code: side by side, each with its own tabs, its active file and the
 * order its files were last used in (Ctrl+Tab). The same file may be open in several groups —
 * they show one Monaco model, so both views edit the same Y.Text. Pure functions over plain
 * data: the workspace store (workspaceStore) holds the result and the editors follow it.
 */
export interface EditorGroup {
  /** Open tabs, by file id, in display order. */
  readonly tabs: readonly string[];
  readonly activeFileId: string | null;
  /** Most recently used first; the same ids as `tabs`. */
  readonly recent: readonly string[];
}

export interface GroupLayout {
  /** Never empty: one group when nothing is split. */
  readonly groups: readonly EditorGroup[];
  /** The group the keyboard is in: opening a file, closing a tab and Ctrl+Tab act on it. */
  readonly focusedGroup: number;
}

/** VS Code allows more; two side by side is what a laptop's width holds. */
export const maxGroups = 3;

export const emptyGroup: EditorGroup = { tabs: [], activeFileId: null, recent: [] };
export const singleGroup: GroupLayout = { groups: [emptyGroup], focusedGroup: 0 };

function replaceGroup(layout: GroupLayout, index: number, group: EditorGroup): GroupLayout {
  return { ...layout, groups: layout.groups.map((g, i) => (i === index ? group : g)) };
}

function touch(recent: readonly string[], fileId: string): string[] {
  return [fileId, ...recent.filter((id) => id !== fileId)];
}

/** Shows a file in a group, adding its tab after the others if it has none. */
export function openInGroup(layout: GroupLayout, index: number, fileId: string): GroupLayout {
  const group = layout.groups[index];
  if (!group) return layout;
  const tabs = group.tabs.includes(fileId) ? group.tabs : [...group.tabs, fileId];
  return { ...replaceGroup(layout, index, { tabs, activeFileId: fileId, recent: touch(group.recent, fileId) }), focusedGroup: index };
}

/**
 * Takes tabs out of a group. The active one, if closed, gives way to the most recently used of
 * those left (VS Code's default). A group left with no tabs closes, unless it is the only one.
 */
export function closeInGroup(layout: GroupLayout, index: number, fileIds: Iterable<string>): GroupLayout {
  const group = layout.groups[index];
  if (!group) return layout;
  const closing = new Set(fileIds);
  const tabs = group.tabs.filter((id) => !closing.has(id));
  if (tabs.length === group.tabs.length) return layout;
  const recent = group.recent.filter((id) => !closing.has(id));
  if (tabs.length === 0 && layout.groups.length > 1) return removeGroup(layout, index);
  const activeFileId = group.activeFileId !== null && !closing.has(group.activeFileId) ? group.activeFileId : (recent[0] ?? tabs[0] ?? null);
  return replaceGroup(layout, index, { tabs, activeFileId, recent });
}

function removeGroup(layout: GroupLayout, index: number): GroupLayout {
  const groups = layout.groups.filter((_, i) => i !== index);
  const focusedGroup = layout.focusedGroup === index ? Math.max(0, index - 1) : layout.focusedGroup > index ? layout.focusedGroup - 1 : layout.focusedGroup;
  return { groups, focusedGroup };
}

/** The tabs right of `fileId` in its group (Close to the Right). */
export function tabsRightOf(group: EditorGroup, fileId: string): string[] {
  const at = group.tabs.indexOf(fileId);
  return at === -1 ? [] : group.tabs.slice(at + 1);
}

/**
 * Ctrl+\: a new group right of `index` showing the same file (VS Code's Split Right); the
 * keyboard moves into it. With as many groups as fit, it focuses the next one instead.
 */
export function splitRight(layout: GroupLayout, index: number): GroupLayout {
  const group = layout.groups[index];
  // Nothing to show beside: VS Code splits an empty group into nothing too.
  if (!group || group.activeFileId === null) return layout;
  if (layout.groups.length >= maxGroups) return { ...layout, focusedGroup: Math.min(index + 1, layout.groups.length - 1) };
  const fresh: EditorGroup = { tabs: [group.activeFileId], activeFileId: group.activeFileId, recent: [group.activeFileId] };
  const groups = [...layout.groups.slice(0, index + 1), fresh, ...layout.groups.slice(index + 1)];
  return { groups, focusedGroup: index + 1 };
}

export function focusGroup(layout: GroupLayout, index: number): GroupLayout {
  return index >= 0 && index < layout.groups.length && index !== layout.focusedGroup ? { ...layout, focusedGroup: index } : layout;
}

/** Drops files that no longer exist (deleted, or now binary) from every group. */
export function keepFiles(layout: GroupLayout, exists: (fileId: string) => boolean): GroupLayout {
  let next = layout;
  for (let i = layout.groups.length - 1; i >= 0; i--) {
    const gone = (next.groups[i]?.tabs ?? []).filter((id) => !exists(id));
    if (gone.length > 0) next = closeInGroup(next, i, gone);
  }
  return next;
}

/** Every file open in some group, each once, in group order. */
export function allTabs(layout: GroupLayout): string[] {
  return [...new Set(layout.groups.flatMap((group) => group.tabs))];
}

/**
 * The file `steps` places down the group's most-recently-used list (Ctrl+Tab is 1, Ctrl+Shift+Tab
 * is -1, wrapping), or null in a group with fewer than two tabs.
 */
export function recentAt(group: EditorGroup, steps: number): string | null {
  const order = group.recent.length === group.tabs.length ? group.recent : [...group.recent, ...group.tabs.filter((id) => !group.recent.includes(id))];
  if (order.length < 2) return null;
  const at = ((steps % order.length) + order.length) % order.length;
  return order[at] ?? null;
}
