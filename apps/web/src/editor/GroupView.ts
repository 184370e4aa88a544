import { loadLayout, saveCursor } from '../memory/workspaceLayout';
import { selectCanEdit, useConnection } from '../stores/connectionStore';
import { useEditorStatus, type EditorSelection } from '../stores/editorStore';
import { focusEditorGroup, useWorkspace } from '../stores/workspaceStore';
import { applyEditorSettings } from './editorSettings';
import type { ModelRegistry } from './ModelRegistry';
import { monaco } from './monacoSetup';
import { recordNavigation } from './navigationHistory';

const views = new Set<GroupView>();

/** The view showing editor group `index`, if it is on screen. */
export function groupViewAt(index: number): GroupView | null {
  for (const view of views) if (view.index === index) return view;
  return null;
}

/** The view whose Monaco editor is `editor` (go to definition asks from one). */
export function groupViewOf(editor: monaco.editor.ICodeEditor): GroupView | null {
  for (const view of views) if (view.editor === editor) return view;
  return null;
}

/**
 * One Monaco editor showing one editor group: the group's active file (tabs switch models and
 * keep each tab's view state), read-only when it must be, and — while it is the focused group —
 * the status bar's position, selection and language; the person's editor settings apply to it. Every group shows the registry's one
 * model per file, so two groups on one file edit the same Y.Text. Outside React so that typing
 * never re-renders a component.
 */
export class GroupView {
  private readonly viewStates = new Map<string, monaco.editor.ICodeEditorViewState | null>();
  private shownFileId: string | null = null;
  private readonly disposers: Array<() => void> = [];

  constructor(
    readonly editor: monaco.editor.IStandaloneCodeEditor,
    private readonly registry: ModelRegistry,
    readonly index: number,
  ) {
    views.add(this);
    this.disposers.push(
      registry.addEditor(editor),
      useWorkspace.subscribe((state, previous) => {
        if (state.focusedGroup !== previous.focusedGroup && this.focused()) this.reportModel();
        if (!this.focused()) return;
        if (state.editorFocusRequest !== previous.editorFocusRequest) editor.focus();
        if (state.revealRequest !== previous.revealRequest && state.revealRequest) this.revealLine(state.revealRequest);
      }),
      useConnection.subscribe(() => this.applyReadOnly()),
    );
    const focus = editor.onDidFocusEditorWidget(() => focusEditorGroup(this.index));
    this.disposers.push(() => focus.dispose());
    // The person's font size, wrap, minimap, theme and tab size, in every group's editor alike.
    this.disposers.push(applyEditorSettings(editor));
    this.trackStatus();
    this.rememberCaret();
    this.routeUndo();
    this.show();
  }

  /** The file this group shows, or null. */
  get fileId(): string | null {
    return this.shownFileId;
  }

  private focused(): boolean {
    return useWorkspace.getState().focusedGroup === this.index;
  }

  /** Called by the owner when the groups, tabs or files changed (after the registry caught up). */
  show(): void {
    const group = useWorkspace.getState().groups[this.index];
    const activeFileId = group?.activeFileId ?? null;
    const model = activeFileId === null ? null : this.registry.modelFor(activeFileId);
    if (this.editor.getModel() === model) return;
    if (this.shownFileId !== null && this.editor.getModel() !== null) {
      this.viewStates.set(this.shownFileId, this.editor.saveViewState());
      if (this.index === 0) this.registry.clearSelection(this.shownFileId);
    }
    this.editor.setModel(model);
    this.shownFileId = model ? activeFileId : null;
    if (model && activeFileId !== null) {
      const viewState = this.viewStates.get(activeFileId);
      if (viewState) this.editor.restoreViewState(viewState);
      this.registry.redrawCursors(activeFileId);
      const handle = this.registry.handleFor(activeFileId);
      // Typing into a file before its content arrives would put the text in odd places.
      if (handle && !handle.synced) {
        void handle.whenSynced().then(() => {
          this.applyReadOnly();
          // The content arrived as one insert and pushed the cursor to its end: start where this
          // browser left the file last time, else at the top.
          if (!viewState && this.editor.getModel() === model && !this.restoreCursor(activeFileId)) this.editor.setPosition({ lineNumber: 1, column: 1 });
        });
      } else if (!viewState) {
        this.restoreCursor(activeFileId);
      }
    }
    this.applyReadOnly();
    if (this.focused()) this.reportModel();
  }

  /** Keeps the scroll and folds of a file whose model is about to be replaced (a rename), to restore on the new one. */
  saveViewStateOf(fileId: string): void {
    if (fileId === this.shownFileId) this.viewStates.set(fileId, this.editor.saveViewState());
  }

  /** Puts the caret where this browser last had it in the file (a reload); false when it has no record. */
  private restoreCursor(fileId: string): boolean {
    const workspaceId = useConnection.getState().workspaceId;
    const path = useWorkspace.getState().pathById.get(fileId);
    const model = this.editor.getModel();
    const cursor = workspaceId !== null && path !== undefined ? loadLayout(workspaceId).cursors[path] : undefined;
    if (!cursor || !model) return false;
    const position = model.validatePosition({ lineNumber: cursor.line, column: cursor.column });
    this.editor.setPosition(position);
    this.editor.revealPositionInCenterIfOutsideViewport(position);
    return true;
  }

  /** Keeps the caret a person moved for the next load of this workspace in this browser, a moment after it settles. */
  private rememberCaret(): void {
    const workspaceId = useConnection.getState().workspaceId;
    if (workspaceId === null) return;
    let timer: number | null = null;
    const saveCaret = () => {
      if (timer !== null) window.clearTimeout(timer);
      timer = null;
      const position = this.editor.getPosition();
      const path = this.shownFileId === null ? undefined : useWorkspace.getState().pathById.get(this.shownFileId);
      if (position && path !== undefined) saveCursor(workspaceId, path, position.lineNumber, position.column);
    };
    const cursor = this.editor.onDidChangeCursorPosition((event) => {
      // The caret a person moved; not the shifts of others' edits (an agent stream moves it
      // every frame).
      if (event.source !== 'keyboard' && event.source !== 'mouse') return;
      if (timer === null) timer = window.setTimeout(saveCaret, 300);
    });
    window.addEventListener('pagehide', saveCaret);
    this.disposers.push(
      () => cursor.dispose(),
      () => window.removeEventListener('pagehide', saveCaret),
      () => timer !== null && window.clearTimeout(timer),
    );
  }

  applyReadOnly(): void {
    const connection = useConnection.getState();
    const loading = this.shownFileId !== null && this.registry.handleFor(this.shownFileId)?.synced === false;
    const readOnly = !selectCanEdit(connection) || loading;
    if (this.editor.getOption(monaco.editor.EditorOption.readOnly) === readOnly) return;
    const message =
      connection.role === 'viewer'
        ? 'You are viewing this workspace. Ask for an editor link to make changes.'
        : connection.status.kind === 'closed'
          ? 'This tab is disconnected for good; see the banner above.'
          : 'This file is still loading.';
    this.editor.updateOptions({ readOnly, readOnlyMessage: { value: message } });
  }

  private trackStatus(): void {
    const cursor = this.editor.onDidChangeCursorSelection((event) => {
      // A second group on a file: y-monaco announces the first editor's caret only.
      if (this.index > 0 && this.shownFileId !== null && this.editor.hasTextFocus()) this.registry.announceSelection(this.shownFileId, event.selection);
      if (!this.focused()) return;
      const model = this.editor.getModel();
      const selection = event.selection;
      useEditorStatus.setState({
        line: selection.positionLineNumber,
        column: selection.positionColumn,
        selectedChars: model && !selection.isEmpty() ? model.getValueLengthInRange(selection) : 0,
        selection: this.selectionState(),
      });
    });
    const position = this.editor.onDidChangeCursorPosition((event) => {
      const path = this.shownFileId === null ? undefined : useWorkspace.getState().pathById.get(this.shownFileId);
      // Where the person went, for Alt+Left/Right: not where others' edits pushed the caret.
      if (path !== undefined && event.reason !== monaco.editor.CursorChangeReason.ContentFlush && event.source !== 'modelChange') {
        recordNavigation({ group: this.index, path, line: event.position.lineNumber, column: event.position.column });
      }
    });
    const language = this.editor.onDidChangeModelLanguage(() => this.focused() && this.reportModel());
    this.disposers.push(
      () => cursor.dispose(),
      () => position.dispose(),
      () => language.dispose(),
    );
  }

  /** The selection of the file on screen in offsets and lines; a range ending at column 1 leaves out that line. */
  private selectionState(): EditorSelection | null {
    const model = this.editor.getModel();
    const selection = this.editor.getSelection();
    if (!model || !selection || this.shownFileId === null) return null;
    const anchor = model.getOffsetAt({ lineNumber: selection.selectionStartLineNumber, column: selection.selectionStartColumn });
    const head = model.getOffsetAt({ lineNumber: selection.positionLineNumber, column: selection.positionColumn });
    const endsAtLineStart = selection.endColumn === 1 && selection.endLineNumber > selection.startLineNumber;
    return { fileId: this.shownFileId, anchor, head, startLine: selection.startLineNumber, endLine: selection.endLineNumber - (endsAtLineStart ? 1 : 0) };
  }

  /** Puts the caret on a line of the file shown, once its content is here. */
  revealLine(request: { fileId: string; line: number; column?: number }): void {
    const show = () => {
      const model = this.editor.getModel();
      if (this.shownFileId !== request.fileId || !model || model.isDisposed()) return;
      const lineNumber = Math.min(Math.max(1, Math.floor(request.line)), model.getLineCount());
      const column = request.column ?? (model.getLineFirstNonWhitespaceColumn(lineNumber) || 1);
      this.editor.setPosition(model.validatePosition({ lineNumber, column }), 'api');
      this.editor.revealLineInCenterIfOutsideViewport(lineNumber);
      this.editor.focus();
    };
    const handle = this.registry.handleFor(request.fileId);
    if (handle && !handle.synced) void handle.whenSynced().then(show);
    else show();
  }

  private reportModel(): void {
    const model = this.editor.getModel();
    if (!model) {
      useEditorStatus.setState({ languageName: null, selection: null });
      return;
    }
    const position = this.editor.getPosition();
    if (position) useEditorStatus.setState({ line: position.lineNumber, column: position.column, selectedChars: 0 });
    useEditorStatus.setState({ selection: this.selectionState() });
    const id = model.getLanguageId();
    const language = monaco.languages.getLanguages().find((l) => l.id === id);
    useEditorStatus.setState({ languageName: language?.aliases?.[0] ?? id });
  }

  /**
   * Undo and redo go to the file's FileUndo (see there for why not Monaco's stack). Actions
   * with the ids 'undo' and 'redo' catch the keys and `editor.trigger(…, 'undo')` alike; their
   * keybindings outrank Monaco's built-in ones.
   */
  private routeUndo(): void {
    const run = (step: 'undo' | 'redo') => {
      if (this.shownFileId === null || this.editor.getOption(monaco.editor.EditorOption.readOnly)) return;
      const undo = this.registry.undoFor(this.shownFileId);
      const caret = step === 'undo' ? undo?.undo() : undo?.redo();
      const model = this.editor.getModel();
      if (caret === null || caret === undefined || !model) return;
      const position = model.getPositionAt(caret);
      this.editor.setPosition(position);
      this.editor.revealPositionInCenterIfOutsideViewport(position);
    };
    const { KeyMod, KeyCode } = monaco;
    const actions = [
      this.editor.addAction({ id: 'undo', label: 'Undo', keybindings: [KeyMod.CtrlCmd | KeyCode.KeyZ], keybindingContext: 'editorTextFocus', run: () => run('undo') }),
      this.editor.addAction({
        id: 'redo',
        label: 'Redo',
        keybindings: [KeyMod.CtrlCmd | KeyCode.KeyY, KeyMod.CtrlCmd | KeyMod.Shift | KeyCode.KeyZ],
        keybindingContext: 'editorTextFocus',
        run: () => run('redo'),
      }),
    ];
    this.disposers.push(() => actions.forEach((action) => action.dispose()));
  }

  dispose(): void {
    views.delete(this);
    for (const dispose of this.disposers) dispose();
  }
}
