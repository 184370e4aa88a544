import { useWorkspace } from '../stores/workspaceStore';
import { groupViewAt } from './GroupView';
import type { monaco } from './monacoSetup';

/** The focused group's file editor (not a diff's or the thread's code blocks): the one F1 belongs to. */
function fileEditor(): monaco.editor.ICodeEditor | null {
  return groupViewAt(useWorkspace.getState().focusedGroup)?.editor ?? groupViewAt(0)?.editor ?? null;
}

/** Opens Monaco's own command list (F1) in the file editor; false when no file is open. */
export function showEditorCommands(): boolean {
  const editor = fileEditor();
  if (!editor) return false;
  editor.focus();
  editor.trigger('command-palette', 'editor.action.quickCommand', null);
  return true;
}
