import { create } from 'zustand';

/**
 * The selection of the file on screen, as text offsets (for requests) and 1-based lines (for
 * people). `anchor` is where it started, `head` where the caret is.
 */
export interface EditorSelection {
  fileId: string;
  anchor: number;
  head: number;
  startLine: number;
  endLine: number;
}

/**
 * What the status bar shows about the active editor, and the selection the agent panel sends
 * with a message. Subscribers pick single fields: the caret moves on every keystroke.
 */
interface EditorState {
  line: number;
  column: number;
  selectedChars: number;
  languageName: string | null;
  selection: EditorSelection | null;
}

export const useEditorStatus = create<EditorState>(() => ({
  line: 1,
  column: 1,
  selectedChars: 0,
  languageName: null,
  selection: null,
}));
