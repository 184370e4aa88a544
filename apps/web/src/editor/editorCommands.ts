import { monaco } from './monacoSetup';

/** The file editor (not a diff's or the thread's code blocks): the one F1 belongs to. */
function fileEditor(): monaco.editor.ICodeEditor | null {
  const editors = monaco.editor.getEditors();
  return editors.find((editor) => editor.getContainerDomNode().closest('[data-testid="editor"]') !== null) ?? null;
}

/** Opens Monaco's own command list (F1) in the file editor; false when no file is open. */
export function showEditorCommands(): boolean {
  const editor = fileEditor();
  if (!editor) return false;
  editor.focus();
  editor.trigger('command-palette', 'editor.action.quickCommand', null);
  return true;
}
