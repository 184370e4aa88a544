import { useEffect, useRef, useState } from 'react';
import { GroupView } from '../editor/GroupView';
import type { ModelRegistry } from '../editor/ModelRegistry';
import { registerAppActions } from '../editor/appActions';
import { monacoTheme, settingsOptions } from '../editor/editorSettings';
import { editorOptions, monaco } from '../editor/monacoSetup';
import { quietSuggest } from '../editor/quietSuggest';
import { focusEditorGroup, useWorkspace } from '../stores/workspaceStore';
import { AgentErrorBanner } from './AgentErrorBanner';
import { EditorPane } from './EditorPane';
import { Tabs } from './Tabs';

/**
 * The editor groups side by side (Ctrl/Cmd+\ splits), each with its tabs and editor. The first
 * group's editor carries the agent, ghost text and follow mode (EditorPane); the others show the
 * same models through a GroupView, so a file open in two groups is one Y.Text edited from both.
 */
export function EditorGroups() {
  const count = useWorkspace((s) => s.groups.length);
  const focusedGroup = useWorkspace((s) => s.focusedGroup);
  const [registry, setRegistry] = useState<ModelRegistry | null>(null);
  return (
    <div className="editor-groups" data-groups={count}>
      {Array.from({ length: count }, (_, i) => (
        <section
          key={i}
          className={i === focusedGroup && count > 1 ? 'editor-group editor-group--focused' : 'editor-group'}
          data-testid="editor-group"
          data-group={i}
          aria-label={count > 1 ? `Editor group ${i + 1}` : undefined}
          onMouseDown={() => focusEditorGroup(i)}
        >
          <Tabs group={i} />
          {i === 0 && <AgentErrorBanner />}
          {i === 0 ? <EditorPane onRegistry={setRegistry} /> : registry && <SplitEditorPane index={i} registry={registry} />}
        </section>
      ))}
    </div>
  );
}

/** A second (third) group's editor: a Monaco editor on the shared models, driven by a GroupView. */
function SplitEditorPane({ index, registry }: { index: number; registry: ModelRegistry }) {
  const container = useRef<HTMLDivElement>(null);
  const empty = useWorkspace((s) => (s.groups[index]?.activeFileId ?? null) === null || s.binaryFileIds.has(s.groups[index]?.activeFileId ?? ''));
  useEffect(() => {
    const element = container.current;
    if (!element) return;
    const editor = monaco.editor.create(element, { ...editorOptions, theme: monacoTheme(), ...settingsOptions(), model: null });
    quietSuggest(editor);
    const view = new GroupView(editor, registry, index);
    const actions = registerAppActions(editor);
    // Split Right moves the keyboard into the new group, which did not exist yet when it asked.
    if (useWorkspace.getState().focusedGroup === index) editor.focus();
    return () => {
      actions();
      view.dispose();
      editor.dispose();
    };
  }, [index, registry]);
  return (
    <div className="editor-pane">
      <div ref={container} className="editor-host" data-testid="split-editor" />
      {empty && (
        <div className="editor-empty">
          <p className="muted">A binary file or no file: nothing to show in this group.</p>
        </div>
      )}
    </div>
  );
}
