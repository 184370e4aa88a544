import { baseName } from '@flint/protocol';
import { selectCanEdit, useConnection } from '../stores/connectionStore';
import { closeDiff, useProject, type DiffView } from '../stores/projectStore';
import { useWorkspace } from '../stores/workspaceStore';
import type { ModelRegistry } from './ModelRegistry';
import { monacoTheme, settingsOptions } from './editorSettings';
import { editorOptions, monaco } from './monacoSetup';

type Model = monaco.editor.ITextModel;

/**
 * The TypeScript worker takes every model in the 'typescript' and 'javascript' languages into
 * its program (eager model sync): a HEAD copy in those languages would be a second declaration
 * of everything in the live file, and its errors the live file's. HEAD's models get languages
 * of their own that borrow only the tokenizer, so they are coloured the same and checked never.
 */
const headTokenizers: Record<string, () => Promise<{ conf: monaco.languages.LanguageConfiguration; language: monaco.languages.IMonarchLanguage }>> = {
  typescript: () => import('monaco-editor/languages/definitions/typescript/typescript'),
  javascript: () => import('monaco-editor/languages/definitions/javascript/javascript'),
};
const registeredHeadLanguages = new Set<string>();

function headLanguageOf(languageId: string): string {
  const load = headTokenizers[languageId];
  if (!load) return languageId;
  const alias = `${languageId}-at-head`;
  if (!registeredHeadLanguages.has(alias)) {
    registeredHeadLanguages.add(alias);
    monaco.languages.register({ id: alias });
    load()
      .then(({ conf, language }) => {
        monaco.languages.setMonarchTokensProvider(alias, language);
        monaco.languages.setLanguageConfiguration(alias, conf);
      })
      .catch((error: unknown) => console.warn(`Flint: HEAD's ${languageId} is shown uncoloured`, error));
  }
  return alias;
}

/** The language Monaco gives a path, for a file with no live model (deleted since HEAD). */
function languageForPath(path: string): string {
  const name = baseName(path).toLowerCase();
  const dot = name.lastIndexOf('.');
  const extension = dot === -1 ? null : name.slice(dot);
  const language = monaco.languages
    .getLanguages()
    .find((l) => l.filenames?.some((f) => f.toLowerCase() === name) || (extension !== null && l.extensions?.some((e) => e.toLowerCase() === extension)));
  return language?.id ?? 'plaintext';
}

function freshModel(text: string, language: string, scheme: string, path: string): Model {
  const uri = monaco.Uri.from({ scheme, path: '/' + path });
  monaco.editor.getModel(uri)?.dispose();
  return monaco.editor.createModel(text, language, uri);
}

/**
 * The Changes view's diff: HEAD on the left (read-only), the file's live model on the right —
 * the same model the editor shows, bound to the file's Y.Doc, so it changes as anyone types and
 * typing into it edits the file. Lives outside React, like EditorController.
 */
export class DiffController {
  private editor: monaco.editor.IStandaloneDiffEditor | null = null;
  private original: Model | null = null;
  /** The right side of a file deleted since HEAD: empty, and this controller's to dispose. */
  private emptyModified: Model | null = null;
  private shownPath: string | null = null;
  private modifiedGone: monaco.IDisposable | null = null;
  /** Someone asked for the keyboard before HEAD's text had come. */
  private focusWanted = false;
  private readonly disposers: Array<() => void> = [];

  constructor(
    private readonly host: HTMLElement,
    private readonly registry: ModelRegistry,
  ) {
    this.disposers.push(
      useProject.subscribe((state, previous) => {
        if (state.diffFocusRequest !== previous.diffFocusRequest) this.focusWanted = true;
        if (state.diff !== previous.diff || this.focusWanted) this.sync();
      }),
      // The registry opens the tab's model when the workspace store changes.
      useWorkspace.subscribe((state, previous) => {
        if (state.pathById !== previous.pathById || state.tabs !== previous.tabs) this.sync();
      }),
      useConnection.subscribe(() => this.applyReadOnly()),
    );
    // Bubbling, so Esc that Monaco used (closing its find widget, dropping a selection) stays there.
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.key !== 'Escape' || event.defaultPrevented) return;
      event.preventDefault();
      closeDiff({ focusEditor: true });
    };
    host.addEventListener('keydown', onKeyDown);
    this.disposers.push(() => host.removeEventListener('keydown', onKeyDown));
    this.sync();
  }

  private sync(): void {
    const diff = useProject.getState().diff;
    if (diff === null || diff.path !== this.shownPath) this.clear();
    if (diff === null) this.focusWanted = false;
    // While HEAD's text loads the pane says so; the previous file's sides are gone already.
    if (diff === null || diff.head === undefined) return;
    const modified = diff.fileId === null ? this.emptyModifiedFor(diff.path) : this.registry.modelFor(diff.fileId);
    if (!modified) return; // the tab's model is not bound yet: the workspace change that binds it calls again
    const head = diff.head ?? '';
    if (this.original === null) this.original = freshModel(head, headLanguageOf(diff.fileId === null ? languageForPath(diff.path) : modified.getLanguageId()), 'flint-head', diff.path);
    else if (this.original.getValue() !== head) this.original.setValue(head);
    this.shownPath = diff.path;
    const editor = (this.editor ??= this.createEditor());
    const current = editor.getModel();
    if (current?.original !== this.original || current.modified !== modified) {
      editor.setModel({ original: this.original, modified });
      this.watchModified(modified);
    }
    this.applyReadOnly();
    if (this.focusWanted) {
      this.focusWanted = false;
      // The pane is shown by React's render of this same change, which comes after this call.
      requestAnimationFrame(() => editor.getModifiedEditor().focus());
    }
  }

  private emptyModifiedFor(path: string): Model {
    this.emptyModified ??= freshModel('', headLanguageOf(languageForPath(path)), 'flint-deleted', path);
    return this.emptyModified;
  }

  /**
   * The registry replaces a file's model when it is renamed and disposes it when its tab closes;
   * the diff editor must let go first, then pick up the new model if there is one.
   */
  private watchModified(modified: Model): void {
    this.modifiedGone?.dispose();
    this.modifiedGone = modified.onWillDispose(() => {
      this.modifiedGone = null;
      this.editor?.setModel(null);
      queueMicrotask(() => this.sync());
    });
  }

  private createEditor(): monaco.editor.IStandaloneDiffEditor {
    const { fontFamily, scrollBeyondLastLine, fixedOverflowWidgets, padding, stickyScroll, inlayHints } = editorOptions;
    // The person's theme and font size (Settings), not the defaults: Monaco's theme is global.
    const { fontSize, lineHeight } = settingsOptions();
    const editor = monaco.editor.createDiffEditor(this.host, {
      theme: monacoTheme(),
      fontFamily,
      fontSize,
      lineHeight,
      scrollBeyondLastLine,
      fixedOverflowWidgets,
      padding,
      stickyScroll,
      inlayHints,
      automaticLayout: true,
      minimap: { enabled: false },
      renderSideBySide: true,
      useInlineViewWhenSpaceIsLimited: true,
      originalEditable: false,
      ignoreTrimWhitespace: false,
      renderOverviewRuler: true,
    });
    this.routeUndo(editor.getModifiedEditor());
    return editor;
  }

  /** Undo on the right side is the file's (FileUndo), as in the editor: Monaco's would rewind others' text. */
  private routeUndo(modifiedEditor: monaco.editor.IStandaloneCodeEditor): void {
    const run = (step: 'undo' | 'redo') => {
      const fileId = useProject.getState().diff?.fileId;
      if (fileId == null || modifiedEditor.getOption(monaco.editor.EditorOption.readOnly)) return;
      const undo = this.registry.undoFor(fileId);
      const caret = step === 'undo' ? undo?.undo() : undo?.redo();
      const model = modifiedEditor.getModel();
      if (caret === null || caret === undefined || !model) return;
      const position = model.getPositionAt(caret);
      modifiedEditor.setPosition(position);
      modifiedEditor.revealPositionInCenterIfOutsideViewport(position);
    };
    const { KeyMod, KeyCode } = monaco;
    modifiedEditor.addAction({ id: 'undo', label: 'Undo', keybindings: [KeyMod.CtrlCmd | KeyCode.KeyZ], keybindingContext: 'editorTextFocus', run: () => run('undo') });
    modifiedEditor.addAction({
      id: 'redo',
      label: 'Redo',
      keybindings: [KeyMod.CtrlCmd | KeyCode.KeyY, KeyMod.CtrlCmd | KeyMod.Shift | KeyCode.KeyZ],
      keybindingContext: 'editorTextFocus',
      run: () => run('redo'),
    });
  }

  private applyReadOnly(): void {
    const diff: DiffView | null = useProject.getState().diff;
    if (!this.editor || !diff) return;
    const connection = useConnection.getState();
    const loading = diff.fileId !== null && this.registry.handleFor(diff.fileId)?.synced === false;
    const readOnly = !selectCanEdit(connection) || diff.fileId === null || loading;
    const message =
      diff.fileId === null
        ? 'This file is deleted; there is nothing to edit.'
        : connection.role === 'viewer'
          ? 'You are viewing this workspace. Ask for an editor link to make changes.'
          : 'This file is still loading.';
    this.editor.getModifiedEditor().updateOptions({ readOnly, readOnlyMessage: { value: message } });
    if (loading) void this.registry.handleFor(diff.fileId!)?.whenSynced().then(() => this.applyReadOnly());
  }

  private clear(): void {
    this.modifiedGone?.dispose();
    this.modifiedGone = null;
    this.editor?.setModel(null);
    this.original?.dispose();
    this.original = null;
    this.emptyModified?.dispose();
    this.emptyModified = null;
    this.shownPath = null;
  }

  dispose(): void {
    for (const dispose of this.disposers) dispose();
    this.clear();
    this.editor?.dispose();
    this.editor = null;
  }
}
