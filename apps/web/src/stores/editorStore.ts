import { create } from 'zustand';

/** What the status bar shows about the active editor. Only the status bar subscribes. */
interface EditorState {
  line: number;
  column: number;
  selectedChars: number;
  languageName: string | null;
  errors: number;
  warnings: number;
}

export const useEditorStatus = create<EditorState>(() => ({
  line: 1,
  column: 1,
  selectedChars: 0,
  languageName: null,
  errors: 0,
  warnings: 0,
}));
