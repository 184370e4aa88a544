import type { FlintClient } from '@flint/client';
import { useConnection } from '../stores/connectionStore';
import { forgetRemotePresence, reannouncePresence, usePresence } from '../stores/presenceStore';
import { unwatchFileDoc, watchFileDoc } from '../stores/projectStore';
import { focusEditorGroup, openFileInGroup, useWorkspace } from '../stores/workspaceStore';
import { AgentController } from './AgentController';
import { registerAppActions } from './appActions';
import { AutocompleteController } from './AutocompleteController';
import { DiagnosticsRefresher } from './DiagnosticsRefresher';
import { FollowController } from './FollowController';
import { groupViewAt, groupViewOf, GroupView } from './GroupView';
import { ModelRegistry, pathOfUri } from './ModelRegistry';
import { navigate } from './navigationHistory';
import { monaco } from './monacoSetup';
import { ProblemsWatcher } from './ProblemsWatcher';
import { ProvisionalText } from './ProvisionalText';
import { RemoteCursorStyles } from './RemoteCursorStyles';

/**
 * Drives the first editor group's Monaco editor and what the whole IDE shares: the open files'
 * models (ModelRegistry, which every group's editor shows), presence, the agent, ghost text,
 * follow mode, go to definition across files, Back and Forward. Other groups' editors are
 * GroupViews on the same registry (SplitEditorPane). Lives outside React so that typing never
 * re-renders a component.
 */
export class EditorController {
  /** The open files' models; the diff editor (DiffController) and split groups show them too. */
  readonly registry: ModelRegistry;
  private readonly view: GroupView;
  private readonly cursorStyles = new RemoteCursorStyles();
  private readonly follow: FollowController;
  private readonly diagnostics: DiagnosticsRefresher;
  private readonly agent: AgentController;
  private readonly autocomplete: AutocompleteController;
  private readonly provisional: ProvisionalText;
  private readonly problems = new ProblemsWatcher();
  private readonly disposers: Array<() => void> = [];

  constructor(
    private readonly editor: monaco.editor.IStandaloneCodeEditor,
    client: FlintClient,
  ) {
    this.registry = new ModelRegistry(client, usePresence.getState().self, {
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
        for (let i = 0; i < useWorkspace.getState().groups.length; i++) groupViewAt(i)?.saveViewStateOf(fileId);
      },
    });
    // Before any file is bound: y-monaco draws remote cursors in the editors it is given then.
    this.disposers.push(this.registry.addEditor(editor));
    const sync = () => {
      const { pathById, tabs, binaryFileIds } = useWorkspace.getState();
      this.registry.reconcile(pathById, tabs, binaryFileIds);
      for (let i = 0; i < useWorkspace.getState().groups.length; i++) groupViewAt(i)?.show();
    };
    this.view = new GroupView(editor, this.registry, 0);
    sync();
    this.disposers.push(
      useWorkspace.subscribe((state, previous) => {
        if (state.pathById !== previous.pathById || state.groups !== previous.groups) sync();
      }),
      usePresence.subscribe((state, previous) => {
        if (state.self !== previous.self) this.registry.setUser(state.self);
      }),
      useConnection.subscribe((state, previous) => {
        if (state.status.kind !== 'open' && previous.status.kind === 'open') {
          for (const handle of this.registry.handles()) forgetRemotePresence(handle);
        } else if (state.status.kind === 'open' && previous.status.kind !== 'open') {
          for (const handle of this.registry.handles()) reannouncePresence(handle);
        }
      }),
    );
    this.disposers.push(registerAppActions(editor));
    this.follow = new FollowController(editor, this.registry);
    this.diagnostics = new DiagnosticsRefresher(editor);
    this.handleCrossFileNavigation();
    this.agent = new AgentController(editor, this.registry);
    this.provisional = new ProvisionalText(editor, this.registry);
    // After the agent: its Esc binding (dismiss the ghost text) wins when both apply.
    this.autocomplete = new AutocompleteController(editor, this.registry, client);
  }

  /** Go to definition into another workspace file opens its tab in the same group (Monaco alone stays put). */
  private handleCrossFileNavigation(): void {
    const opener = monaco.editor.registerEditorOpener({
      openCodeEditor: (source, resource, selectionOrPosition) => {
        const path = pathOfUri(resource);
        const entry = path === null ? undefined : useWorkspace.getState().entries.get(path);
        if (entry?.kind !== 'file') return false;
        const view = groupViewOf(source) ?? this.view;
        openFileInGroup(view.index, entry.fileId);
        const editor = view.editor;
        if (editor.getModel()?.uri.toString() !== resource.toString()) return false;
        if (selectionOrPosition && 'startLineNumber' in selectionOrPosition) {
          editor.setSelection(selectionOrPosition);
          editor.revealRangeInCenterIfOutsideViewport(selectionOrPosition);
        } else if (selectionOrPosition) {
          editor.setPosition(selectionOrPosition);
          editor.revealPositionInCenterIfOutsideViewport(selectionOrPosition);
        }
        editor.focus();
        return true;
      },
    });
    this.disposers.push(() => opener.dispose());
  }

  dispose(): void {
    for (const dispose of this.disposers) dispose();
    this.view.dispose();
    this.problems.dispose();
    this.autocomplete.dispose();
    this.agent.dispose();
    this.provisional.dispose();
    this.follow.dispose();
    this.diagnostics.dispose();
    this.registry.dispose();
    this.cursorStyles.dispose();
  }
}

/**
 * Alt+Left / Alt+Right: back or forward to where the caret was, across files and groups; false
 * when there is nowhere to go.
 */
export function goBackOrForward(step: -1 | 1): boolean {
  return navigate(step, (entry) => {
    const state = useWorkspace.getState();
    const target = state.entries.get(entry.path);
    if (target?.kind !== 'file') return false;
    const group = entry.group < state.groups.length ? entry.group : state.focusedGroup;
    openFileInGroup(group, target.fileId);
    focusEditorGroup(group);
    const view = groupViewAt(group);
    if (!view || view.fileId !== target.fileId) return true;
    view.revealLine({ fileId: target.fileId, line: entry.line, column: entry.column });
    return true;
  });
}
