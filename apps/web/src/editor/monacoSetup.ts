import * as monaco from 'monaco-editor';
import CssWorker from 'monaco-editor/language/css/css.worker?worker';
import HtmlWorker from 'monaco-editor/language/html/html.worker?worker';
import JsonWorker from 'monaco-editor/language/json/json.worker?worker';
import EditorWorker from 'monaco-editor/editor/editor.worker?worker';
import { swallowMonacoCancellation } from './swallowMonacoCancellation';
import TsWorker from './typescript.worker?worker';

/**
 * The one Monaco instance of the app, configured once on import: workers bundled by Vite (no
 * CDN: Flint runs offline; the TypeScript one is ours, see typescript.worker.ts), TypeScript
 * set up for a multi-file workspace, and the Flint theme.
 * y-monaco resolves to the same module through the alias in vite.config.ts.
 */
swallowMonacoCancellation(window);

globalThis.MonacoEnvironment = {
  getWorker(_workerId: string, label: string): Worker {
    switch (label) {
      case 'typescript':
      case 'javascript':
        return new TsWorker();
      case 'json':
        return new JsonWorker();
      case 'css':
      case 'scss':
      case 'less':
        return new CssWorker();
      case 'html':
      case 'handlebars':
      case 'razor':
        return new HtmlWorker();
      default:
        return new EditorWorker();
    }
  },
};

const ts = monaco.typescript;
const compilerOptions: monaco.typescript.CompilerOptions = {
  target: ts.ScriptTarget.ESNext,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.NodeJs,
  allowNonTsExtensions: true,
  allowJs: true,
  strict: true,
  jsx: ts.JsxEmit.ReactJSX,
  esModuleInterop: true,
  isolatedModules: true,
};

/**
 * Packages are not installed in a workspace, so bare imports ("react") would all be errors.
 * Shorthand ambient modules type them as `any`. Not `declare module '*'`: that would match
 * "./wrong-path" too. One pattern per first character matches only bare specifiers, so a
 * wrong relative path or a wrong imported name is still reported.
 */
const workspaceAmbient = [
  ...[...'abcdefghijklmnopqrstuvwxyz@'].map((first) => `declare module '${first}*';`),
  'declare namespace JSX { interface IntrinsicElements { [element: string]: any } }',
].join('\n');

for (const defaults of [ts.typescriptDefaults, ts.javascriptDefaults]) {
  defaults.setCompilerOptions(compilerOptions);
  // Every workspace file has a model; the worker must see them all to resolve imports.
  defaults.setEagerModelSync(true);
  defaults.addExtraLib(workspaceAmbient, 'file:///node_modules/@types/flint-workspace/index.d.ts');
}
// Eager sync hands the worker the models there are when it starts. A model made after that (a
// file someone, or the agent, created) would reach it only once shown in the editor: until then
// an import of it was "Cannot find module". Each new model goes to the worker as it is made.
let unsynced: monaco.Uri[] = [];
monaco.editor.onDidCreateModel((model) => {
  const language = model.getLanguageId();
  if ((language !== 'typescript' && language !== 'javascript') || unsynced.push(model.uri) > 1) return;
  // One message for the models of one change (a turn's new files, a folder's import).
  queueMicrotask(() => {
    const uris = unsynced;
    unsynced = [];
    ts.getTypeScriptWorker()
      .then((getWorker) => getWorker(...uris))
      // Refused only before TypeScript's mode is set up, when no worker exists yet: the worker
      // then takes every model there is when it starts.
      .catch((reason: unknown) => console.debug('Flint: the TypeScript worker is not running yet; it will read these files when it starts', uris.map(String), reason));
  });
});

// Check only the file on screen: markers of hidden files are never shown, and every check of
// a big workspace costs the worker. DiagnosticsRefresher re-checks it when other files change.
ts.typescriptDefaults.setDiagnosticsOptions({ onlyVisible: true });
ts.javascriptDefaults.setDiagnosticsOptions({ onlyVisible: true, noSemanticValidation: true });

monaco.editor.defineTheme('flint-dark', {
  base: 'vs-dark',
  inherit: true,
  rules: [
    { token: 'comment', foreground: '848d9a', fontStyle: 'italic' },
    { token: 'keyword', foreground: 'c792ea' },
    { token: 'string', foreground: 'a5d6a7' },
    { token: 'number', foreground: 'f6b26b' },
    { token: 'type', foreground: '7fd1e8' },
    { token: 'type.identifier', foreground: '7fd1e8' },
  ],
  colors: {
    'editor.background': '#16181d',
    'editor.foreground': '#d6d9df',
    // Line numbers are text: 4.5:1 on the background (axe, as VS Code's own dark theme does).
    'editorLineNumber.foreground': '#7d8590',
    'editorLineNumber.dimmedForeground': '#7d8590',
    'editorLineNumber.activeForeground': '#9aa3b2',
    'editor.lineHighlightBackground': '#1c1f26',
    'editor.lineHighlightBorder': '#00000000',
    'editor.selectionBackground': '#2c4a7a99',
    // The occurrences of the word at the caret (seen most in an unfocused group's editor): a tint
    // the keywords keep 4.5:1 on, and a border so it still shows.
    'editor.wordHighlightBackground': '#262b36',
    'editor.wordHighlightStrongBackground': '#262b36',
    'editor.wordHighlightTextBackground': '#262b36',
    'editor.selectionHighlightBackground': '#262b36',
    'editor.wordHighlightBorder': '#4a5468',
    'editor.wordHighlightStrongBorder': '#4a5468',
    'editor.inactiveSelectionBackground': '#2c4a7a55',
    'editorCursor.foreground': '#f5a524',
    'editorIndentGuide.background1': '#23272f',
    'editorIndentGuide.activeBackground1': '#3a404b',
    'editorGutter.background': '#16181d',
    'editorWidget.background': '#1c1f26',
    'editorWidget.border': '#2a2f38',
    'editorSuggestWidget.background': '#1c1f26',
    'editorSuggestWidget.border': '#2a2f38',
    'editorHoverWidget.background': '#1c1f26',
    'editorHoverWidget.border': '#2a2f38',
    'scrollbarSlider.background': '#ffffff14',
    'scrollbarSlider.hoverBackground': '#ffffff24',
    'minimap.background': '#16181d',
    // The Changes view's diff (DiffController): quieter than vs-dark's, in the tree's git colours.
    'diffEditor.insertedLineBackground': '#81c9950f',
    'diffEditor.insertedTextBackground': '#81c99530',
    'diffEditor.removedLineBackground': '#ef7b6b12',
    'diffEditor.removedTextBackground': '#ef7b6b38',
    'diffEditor.diagonalFill': '#ffffff0a',
    'diffEditor.border': '#262a33',
  },
});

// The light theme (Settings → Theme, or a light system preference): vs with Flint's own surfaces.
monaco.editor.defineTheme('flint-light', {
  base: 'vs',
  inherit: true,
  rules: [
    { token: 'comment', foreground: '5f6670', fontStyle: 'italic' },
    { token: 'keyword', foreground: '8839b5' },
    { token: 'string', foreground: '116329' },
    { token: 'number', foreground: '9a4d00' },
    { token: 'type', foreground: '0b7285' },
    { token: 'type.identifier', foreground: '0b7285' },
  ],
  colors: {
    'editor.background': '#ffffff',
    'editor.foreground': '#1f2328',
    'editorLineNumber.foreground': '#6e7781',
    'editorLineNumber.dimmedForeground': '#6e7781',
    'editorLineNumber.activeForeground': '#1f2328',
    'editor.lineHighlightBackground': '#f3f5f8',
    'editor.lineHighlightBorder': '#00000000',
    'editor.selectionBackground': '#b6d3ff',
    'editor.wordHighlightBackground': '#e8ebf0',
    'editor.wordHighlightStrongBackground': '#e8ebf0',
    'editor.wordHighlightTextBackground': '#e8ebf0',
    'editor.selectionHighlightBackground': '#e8ebf0',
    'editor.wordHighlightBorder': '#b8c0cc',
    'editor.wordHighlightStrongBorder': '#b8c0cc',
    'editor.inactiveSelectionBackground': '#d8e6fb',
    'editorCursor.foreground': '#b35900',
    'editorGutter.background': '#ffffff',
    'editorWidget.background': '#f6f8fa',
    'editorWidget.border': '#d0d7de',
    'editorSuggestWidget.background': '#ffffff',
    'editorSuggestWidget.border': '#d0d7de',
    'editorHoverWidget.background': '#ffffff',
    'editorHoverWidget.border': '#d0d7de',
    'minimap.background': '#ffffff',
    'diffEditor.insertedLineBackground': '#1a7f3712',
    'diffEditor.insertedTextBackground': '#1a7f3730',
    'diffEditor.removedLineBackground': '#cf222e10',
    'diffEditor.removedTextBackground': '#cf222e30',
  },
});

// High contrast is Monaco's own hc-black, but for the line numbers past the end (dimmed: 3.65:1).
monaco.editor.defineTheme('flint-hc', {
  base: 'hc-black',
  inherit: true,
  rules: [],
  colors: { 'editorLineNumber.dimmedForeground': '#a0a0a0' },
});

/** Monaco's theme for each of the app's (settingsStore's AppliedTheme). */
export const monacoThemes = { dark: 'flint-dark', light: 'flint-light', 'high-contrast': 'flint-hc' } as const;

/** The editor's look and behaviour: the IDE's one editor and the benchmark's naive control page use it. */
export const editorOptions: monaco.editor.IStandaloneEditorConstructionOptions = {
  theme: 'flint-dark',
  automaticLayout: true,
  fontFamily: "'JetBrains Mono', 'Fira Code', 'Cascadia Code', Menlo, Consolas, 'DejaVu Sans Mono', monospace",
  fontSize: 13,
  lineHeight: 20,
  minimap: { enabled: false },
  scrollBeyondLastLine: false,
  renderLineHighlight: 'line',
  smoothScrolling: true,
  cursorBlinking: 'smooth',
  fixedOverflowWidgets: true,
  // Room over line 1 for a remote cursor's name, which sits above its line.
  padding: { top: 16 },
  tabSize: 2,
  stickyScroll: { enabled: false },
  // Ctrl+wheel sets the font size, as in VS Code; EditorController keeps it per workspace.
  mouseWheelZoom: true,
  // Flint sets no TypeScript inlay-hint preferences, so the worker answers every request with
  // nothing — after re-parsing the file, which changes every frame while the agent streams
  // (~200 ms of worker CPU per request on a 20,000-line file). Off: no request at all.
  inlayHints: { enabled: 'off' },
};

export { monaco };
