import { requestThreadInputFocus, setAgentPanelOpen, useThread } from './threadStore';
import { closeTab, requestEditorFocus, useWorkspace } from './workspaceStore';

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
