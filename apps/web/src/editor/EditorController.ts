import type { FlintClient } from '@flint/client';
import { loadLayout, saveCursor } from '../memory/workspaceLayout';
import { selectCanEdit, useConnection } from '../stores/connectionStore';
import { useEditorStatus, type EditorSelection } from '../stores/editorStore';
import { forgetRemotePresence, reannouncePresence, usePresence } from '../stores/presenceStore';
import { unwatchFileDoc, watchFileDoc } from '../stores/projectStore';
import { openFile, useWorkspace } from '../stores/workspaceStore';
import { AgentController } from './AgentController';
import { registerAppActions } from './appActions';
import { AutocompleteController } from './AutocompleteController';
import { DiagnosticsRefresher } from './DiagnosticsRefresher';
import { applyEditorSettings } from './editorSettings';
import { FollowController } from './FollowController';
import { ModelRegistry, pathOfUri } from './ModelRegistry';
import { monaco } from './monacoSetup';
import { ProvisionalText } from './ProvisionalText';
import { RemoteCursorStyles } from './RemoteCursorStyles';

/**
 * Drives the one Monaco editor from the stores: which model it shows (tabs switch models and
 * keep each tab's view state), whether it is read-only, and what the status bar reports.
 * Lives outside React so that typing never re-renders a component.
 */
export class EditorController {
  /** The open files' models; the diff editor (DiffController) shows them too. */
  readonly registry: ModelRegistry;
  private readonly cursorStyles = new RemoteCursorStyles();
  private readonly follow: FollowController;
  private readonly diagnostics: DiagnosticsRefresher;
  private readonly agent: AgentController;
  private readonly autocomplete: AutocompleteController;
  private readonly provisional: ProvisionalText;
  private readonly viewStates = new Map<string, monaco.editor.ICodeEditorViewState | null>();
  private shownFileId: string | null = null;
  private readonly disposers: Array<() => void> = [];

  constructor(
    private readonly editor: monaco.editor.IStandaloneCodeEditor,
    client: FlintClient,
  ) {
    this.registry = new ModelRegistry(client, editor, usePresence.getState().self, {
      onOpen: (handle) => {
        this.cursorStyles.track(handle);
        // Open files are written to disk by a folder project's gateway: git's answer changes.
        watchFileDoc(handle.doc);
      },
      onClose: (handle) => {
        this.cursorStyles.untrack(handle);
        unwatchFileDoc(handle.doc);
      },
      onModelWillChange: (fileId) => {
        if (fileId === this.shownFileId) this.viewStates.set(fileId, editor.saveViewState());
      },
    });
    const sync = () => {
      const { pathById, tabs, binaryFileIds } = useWorkspace.getState();
      this.registry.reconcile(pathById, tabs, binaryFileIds);
      this.showActive();
    };
    sync();
    this.disposers.push(
      useWorkspace.subscribe((state, previous) => {
        if (state.pathById !== previous.pathById || state.tabs !== previous.tabs || state.activeFileId !== previous.activeFileId) sync();
        if (state.editorFocusRequest !== previous.editorFocusRequest) editor.focus();
        if (state.revealRequest !== previous.revealRequest && state.revealRequest) this.revealLine(state.revealRequest);
      }),
      usePresence.subscribe((state, previous) => {
        if (state.self !== previous.self) this.registry.setUser(state.self);
      }),
      useConnection.subscribe((state, previous) => {
        this.applyReadOnly();
        if (state.status.kind !== 'open' && previous.status.kind === 'open') {
          for (const handle of this.registry.handles()) forgetRemotePresence(handle);
        } else if (state.status.kind === 'open' && previous.status.kind !== 'open') {
          for (const handle of this.registry.handles()) reannouncePresence(handle);
        }
      }),
    );
    this.applyReadOnly();
    this.disposers.push(applyEditorSettings(editor));
    this.rememberLayout();
    this.disposers.push(registerAppActions(editor));
    this.follow = new FollowController(editor, this.registry);
    this.diagnostics = new DiagnosticsRefresher(editor);
    this.trackStatus();
    this.handleCrossFileNavigation();
    this.routeUndo();
    this.agent = new AgentController(editor, this.registry);
    this.provisional = new ProvisionalText(editor, this.registry);
    // After the agent: its Esc binding (dismiss the ghost text) wins when both apply.
    this.autocomplete = new AutocompleteController(editor, this.registry, client);
  }

  private showActive(): void {
    const { activeFileId } = useWorkspace.getState();
    const model = activeFileId === null ? null : this.registry.modelFor(activeFileId);
    if (this.editor.getModel() === model) return;
    if (this.shownFileId !== null && this.editor.getModel() !== null) {
      this.viewStates.set(this.shownFileId, this.editor.saveViewState());
      this.registry.clearSelection(this.shownFileId);
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
    this.reportModel();
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

  /**
   * Keeps the caret of the file on screen for the next load of this workspace in this browser,
   * written a moment after it settles, and when the page goes away. The font size is the
   * person's setting (editorSettings), the same in every workspace.
   */
  private rememberLayout(): void {
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

  private applyReadOnly(): void {
    const connection = useConnection.getState();
    const { activeFileId } = useWorkspace.getState();
    const loading = activeFileId !== null && this.registry.handleFor(activeFileId)?.synced === false;
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
      const model = this.editor.getModel();
      const selection = event.selection;
      useEditorStatus.setState({
        line: selection.positionLineNumber,
        column: selection.positionColumn,
        selectedChars: model && !selection.isEmpty() ? model.getValueLengthInRange(selection) : 0,
        selection: this.selectionState(),
      });
    });
    const markers = monaco.editor.onDidChangeMarkers((uris) => {
      const model = this.editor.getModel();
      if (model && uris.some((uri) => uri.toString() === model.uri.toString())) this.reportMarkers(model);
    });
    this.disposers.push(
      () => cursor.dispose(),
      () => markers.dispose(),
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

  /** Puts the caret on a line of a file the agent panel pointed at, once its content is here. */
  private revealLine(request: { fileId: string; line: number }): void {
    const show = () => {
      const model = this.editor.getModel();
      if (this.shownFileId !== request.fileId || !model || model.isDisposed()) return;
      const lineNumber = Math.min(Math.max(1, Math.floor(request.line)), model.getLineCount());
      this.editor.setPosition({ lineNumber, column: model.getLineFirstNonWhitespaceColumn(lineNumber) || 1 });
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
      useEditorStatus.setState({ languageName: null, errors: 0, warnings: 0, selection: null });
      return;
    }
    const position = this.editor.getPosition();
    if (position) useEditorStatus.setState({ line: position.lineNumber, column: position.column, selectedChars: 0 });
    useEditorStatus.setState({ selection: this.selectionState() });
    const id = model.getLanguageId();
    const language = monaco.languages.getLanguages().find((l) => l.id === id);
    useEditorStatus.setState({ languageName: language?.aliases?.[0] ?? id });
    this.reportMarkers(model);
  }

  private reportMarkers(model: monaco.editor.ITextModel): void {
    let errors = 0;
    let warnings = 0;
    for (const marker of monaco.editor.getModelMarkers({ resource: model.uri })) {
      if (marker.severity === monaco.MarkerSeverity.Error) errors++;
      else if (marker.severity === monaco.MarkerSeverity.Warning) warnings++;
    }
    useEditorStatus.setState({ errors, warnings });
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

  /** Go to definition into another workspace file opens its tab (Monaco alone stays put). */
  private handleCrossFileNavigation(): void {
    const opener = monaco.editor.registerEditorOpener({
      openCodeEditor: (_source, resource, selectionOrPosition) => {
        const path = pathOfUri(resource);
        if (path === null || useWorkspace.getState().entries.get(path)?.kind !== 'file') return false;
        openFile(path);
        if (this.editor.getModel()?.uri.toString() !== resource.toString()) return false;
        if (selectionOrPosition && 'startLineNumber' in selectionOrPosition) {
          this.editor.setSelection(selectionOrPosition);
          this.editor.revealRangeInCenterIfOutsideViewport(selectionOrPosition);
        } else if (selectionOrPosition) {
          this.editor.setPosition(selectionOrPosition);
          this.editor.revealPositionInCenterIfOutsideViewport(selectionOrPosition);
        }
        this.editor.focus();
        return true;
      },
    });
    this.disposers.push(() => opener.dispose());
  }

  dispose(): void {
    for (const dispose of this.disposers) dispose();
    this.autocomplete.dispose();
    this.agent.dispose();
    this.provisional.dispose();
    this.follow.dispose();
    this.diagnostics.dispose();
    this.registry.dispose();
    this.cursorStyles.dispose();
  }
}
