import { useEffect, useRef } from 'react';
import { DiffController } from '../editor/DiffController';
import { EditorController } from '../editor/EditorController';
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
 * The one Monaco editor of the tab. Tabs switch its model; see EditorController. Over it: the
 * diff against HEAD (DiffController) or, for a binary file, a note that it is not text; for a
 * folder file that stopped reaching the disk, a banner saying why.
 */
export function EditorPane() {
  const container = useRef<HTMLDivElement>(null);
  const diffHost = useRef<HTMLDivElement>(null);
  const hasActive = useWorkspace((s) => s.activeFileId !== null);
  const binary = useWorkspace((s) => s.activeFileId !== null && s.binaryFileIds.has(s.activeFileId));
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
    return () => {
      diff?.dispose();
      controller.dispose();
      editor.dispose();
    };
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
