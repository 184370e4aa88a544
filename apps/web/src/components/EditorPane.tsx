import { useEffect, useRef } from 'react';
import { DiffController } from '../editor/DiffController';
import { EditorController } from '../editor/EditorController';
import type { ModelRegistry } from '../editor/ModelRegistry';
import { monacoTheme, settingsOptions } from '../editor/editorSettings';
import { editorOptions, monaco } from '../editor/monacoSetup';
import { quietSuggest } from '../editor/quietSuggest';
import { requireClient, useConnection } from '../stores/connectionStore';
import { useProject } from '../stores/projectStore';
import { useWorkspace } from '../stores/workspaceStore';
import { AgentReviewBar } from './AgentReviewBar';
import { BinaryFilePane } from './BinaryFilePane';
import { DiffPane } from './DiffPane';
import { UnsyncedBanner } from './UnsyncedBanner';

/**
 * The first editor group's Monaco editor. Tabs switch its model; see EditorController, which
 * hands the open files' models to the other groups (`onRegistry`). Over it: the
 * diff against HEAD (DiffController) or, for a binary file, a note that it is not text; for a
 * folder file that stopped reaching the disk, a banner saying why.
 */
export function EditorPane({ onRegistry }: { onRegistry(registry: ModelRegistry | null): void }) {
  const container = useRef<HTMLDivElement>(null);
  const diffHost = useRef<HTMLDivElement>(null);
  const shown = useWorkspace((s) => s.groups[0]?.activeFileId ?? null);
  const hasActive = shown !== null;
  const binary = useWorkspace((s) => shown !== null && s.binaryFileIds.has(shown));
  const diffOpen = useProject((s) => s.diff !== null);
  const indexSynced = useWorkspace((s) => s.indexSynced);
  const closed = useConnection((s) => s.status.kind === 'closed');

  useEffect(() => {
    const element = container.current;
    if (!element) return;
    const editor = monaco.editor.create(element, { ...editorOptions, theme: monacoTheme(), ...settingsOptions(), model: null });
    quietSuggest(editor);
    // A benchmark's instrumentation (bench/benchmarks/b5BrowserSmoothness.ts) watches the editor
    // through this optional hook; nothing in the app sets it.
    (globalThis as { __FLINT_EDITOR_PROBE__?: (e: typeof editor) => void }).__FLINT_EDITOR_PROBE__?.(editor);
    const controller = new EditorController(editor, requireClient());
    const diff = diffHost.current ? new DiffController(diffHost.current, controller.registry) : null;
    onRegistry(controller.registry);
    return () => {
      onRegistry(null);
      diff?.dispose();
      controller.dispose();
      editor.dispose();
    };
    // Once: the editor lives as long as the workspace; onRegistry is a state setter.
  }, []);

  return (
    <div className="editor-pane">
      <div ref={container} className="editor-host" data-testid="editor" hidden={diffOpen} />
      <DiffPane hostRef={diffHost} />
      {hasActive && binary && !diffOpen && <BinaryFilePane />}
      {hasActive && !binary && !diffOpen && <AgentReviewBar />}
      {hasActive && !binary && !diffOpen && <UnsyncedBanner />}
      {!hasActive && !diffOpen && (
        <div className="editor-empty">
          {indexSynced ? (
            <>
              <p>No file is open.</p>
              <p className="muted">
                Pick one in the tree, or press <kbd>Ctrl</kbd>+<kbd>P</kbd> to find a file.
              </p>
            </>
          ) : (
            <p className="muted">{closed ? 'This workspace could not be opened.' : 'Opening workspace…'}</p>
          )}
        </div>
      )}
    </div>
  );
}
