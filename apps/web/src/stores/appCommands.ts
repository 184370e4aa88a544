import { tabsRightOf } from './editorGroups';
import { requestTreeReveal } from './paletteStore';
import { setChangesOpen } from './projectStore';
import { closeSearch } from './searchStore';
import { requestThreadInputFocus, setAgentPanelOpen, useThread } from './threadStore';
import { closeTab, closeTabs, focusEditorGroup, openFileInGroup, requestEditorFocus, showNotice, splitEditor, useWorkspace } from './workspaceStore';

/**
 * The app's own commands behind its shortcuts: the window's key handler (Workspace) and the
 * editor's command list (F1, appActions) run the same ones.
 */

/**
 * Ctrl/Cmd-L: opens the agent panel with the keyboard in its input; from elsewhere in the IDE
 * it moves the keyboard there; from inside the panel it closes it and goes back to the editor.
 */
export function toggleAgentPanel(): void {
  const inPanel = document.activeElement?.closest('.agent-panel') != null;
  if (!useThread.getState().panelOpen) setAgentPanelOpen(true);
  else if (!inPanel) requestThreadInputFocus();
  else {
    setAgentPanelOpen(false);
    requestEditorFocus();
  }
}

export function closeActiveTab(): void {
  const { activeFileId } = useWorkspace.getState();
  if (activeFileId !== null) closeTab(activeFileId);
}

/** What a tab's context menu offers (right click or Shift+F10 on a tab), for one tab of one group. */
export type TabAction = 'close' | 'close-others' | 'close-right' | 'close-all' | 'copy-path' | 'copy-relative-path' | 'reveal' | 'split-right';

export function runTabAction(action: TabAction, group: number, fileId: string): void {
  const state = useWorkspace.getState();
  const editorGroup = state.groups[group];
  const tabs = editorGroup?.tabs ?? [];
  const path = state.pathById.get(fileId);
  switch (action) {
    case 'close':
      return closeTab(fileId, group);
    case 'close-others':
      return closeTabs(tabs.filter((id) => id !== fileId), group);
    case 'close-right':
      return closeTabs(editorGroup ? tabsRightOf(editorGroup, fileId) : [], group);
    case 'close-all':
      return closeTabs(tabs, group);
    case 'copy-path':
      // The workspace is the editors' file system: its root is "/" (models are file:///<path>).
      if (path !== undefined) void copyText('/' + path);
      return;
    case 'copy-relative-path':
      if (path !== undefined) void copyText(path);
      return;
    case 'reveal':
      if (path === undefined) return;
      closeSearch();
      setChangesOpen(false);
      return requestTreeReveal(path);
    case 'split-right':
      openFileInGroup(group, fileId);
      splitEditor();
      return;
  }
}

async function copyText(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
  } catch (error) {
    // No clipboard permission (an insecure origin, a denied prompt): say so rather than nothing.
    console.warn('Flint: could not copy', error);
    showNotice('Could not copy to the clipboard: this browser refused it.');
  }
}

/** Ctrl+1, Ctrl+2…: into that editor group's editor, when there is one. */
export function focusGroupEditor(index: number): void {
  focusEditorGroup(index, { focus: true });
}

/**
 * Whether an open editor widget owns this key, so the app's shortcut yields (VS Code's rule):
 * with Find open, Alt+W/C/R/L are its toggles (whole word, case, regex, in selection), both in
 * its input and in the text; a rename box or the suggestion list keep what is typed into them.
 * Read from the editor's DOM, where Monaco shows the state its context keys (findWidgetVisible,
 * renameInputVisible, suggestWidgetVisible) describe.
 */
export function editorWidgetOwnsKey(event: KeyboardEvent): boolean {
  const target = event.target instanceof Element ? event.target : null;
  const editor = target?.closest('.monaco-editor');
  if (!target || !editor) return false;
  if (event.altKey && editor.querySelector('.find-widget.visible') !== null) return true;
  return target.closest('.rename-box, .suggest-widget') !== null;
}
