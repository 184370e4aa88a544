import { appliedTheme, setFontSize, useSettings } from '../stores/settingsStore';
import { monaco, monacoThemes } from './monacoSetup';

/**
 * The person's settings (settingsStore) on Monaco: the theme (global to Monaco: the editor and
 * the Changes view's diff alike), and the font size, word wrap, minimap and tab size.
 */

export function monacoTheme(): string {
  return monacoThemes[appliedTheme(useSettings.getState())];
}

/** The options a setting decides; the line height keeps the default's 13:20 ratio. */
export function settingsOptions(): monaco.editor.IEditorOptions {
  const { fontSize, wordWrap, minimap } = useSettings.getState();
  return { fontSize, lineHeight: Math.round((fontSize * 20) / 13), wordWrap: wordWrap ? 'on' : 'off', minimap: { enabled: minimap } };
}

/**
 * Applies the settings to the editor and every model, now and whenever they change. Monaco's
 * own zoom (F1 → Editor Font Zoom In/Out, Ctrl+wheel) changes the font size setting: the zoom is
 * folded into it and reset, so the size persists as a plain number.
 */
export function applyEditorSettings(editor: monaco.editor.IStandaloneCodeEditor): () => void {
  const apply = () => {
    monaco.editor.setTheme(monacoTheme());
    editor.updateOptions(settingsOptions());
  };
  const applyTabSize = () => {
    const { tabSize } = useSettings.getState();
    for (const model of monaco.editor.getModels()) model.updateOptions({ tabSize, indentSize: tabSize });
  };
  apply();
  applyTabSize();
  const unsubscribe = useSettings.subscribe((state, previous) => {
    if (state.tabSize !== previous.tabSize) applyTabSize();
    if (state.theme !== previous.theme || state.systemPrefersLight !== previous.systemPrefersLight || state.fontSize !== previous.fontSize || state.wordWrap !== previous.wordWrap || state.minimap !== previous.minimap) apply();
  });
  const created = monaco.editor.onDidCreateModel((model) => {
    const { tabSize } = useSettings.getState();
    model.updateOptions({ tabSize, indentSize: tabSize });
  });
  const zoom = editor.onDidChangeConfiguration((event) => {
    if (!event.hasChanged(monaco.editor.EditorOption.fontInfo)) return;
    const shown = editor.getOption(monaco.editor.EditorOption.fontInfo).fontSize;
    const set = useSettings.getState().fontSize;
    if (Math.abs(shown - set) < 0.5) return;
    // A zoom step: one pixel on the setting, and the zoom level 0 again (after this event).
    // Monaco's steps are 10% of the size, which would jump 17 → 19 px.
    queueMicrotask(() => {
      editor.trigger('flint.settings', 'editor.action.fontZoomReset', null);
      setFontSize(shown > set ? set + 1 : set - 1);
    });
  });
  return () => {
    unsubscribe();
    created.dispose();
    zoom.dispose();
  };
}
