import { useEffect } from 'react';
import { selectCanEdit, useConnection } from '../stores/connectionStore';
import { closeTab, requestCreate, useWorkspace } from '../stores/workspaceStore';
import { AgentErrorBanner } from './AgentErrorBanner';
import { ClosedBanner } from './ClosedBanner';
import { EditorPane } from './EditorPane';
import { FileTree } from './FileTree';
import { Notice } from './Notice';
import { QuickOpen } from './QuickOpen';
import { ShareDialog } from './ShareDialog';
import { StatusBar } from './StatusBar';
import { Tabs } from './Tabs';
import { TopBar } from './TopBar';

/**
 * Browsers keep Ctrl+N and Ctrl+W for themselves, so the file shortcuts use Alt, as
 * browser IDEs do. Capture phase, because Monaco consumes keys typed into the editor.
 */
function useShortcuts(): void {
  useEffect(() => {
    const onKeyDown = (event: KeyboardEvent) => {
      if ((event.ctrlKey || event.metaKey) && !event.altKey && event.code === 'KeyS') {
        // Every keystroke is already saved; don't let habit open the browser's "Save page".
        event.preventDefault();
        return;
      }
      if (!event.altKey || event.ctrlKey || event.metaKey) return;
      const key = event.code;
      if (key === 'KeyN' && selectCanEdit(useConnection.getState())) {
        requestCreate(event.shiftKey ? 'folder' : 'file');
      } else if (key === 'KeyW' && !event.shiftKey) {
        const { activeFileId } = useWorkspace.getState();
        if (activeFileId !== null) closeTab(activeFileId);
      } else {
        return;
      }
      event.preventDefault();
      event.stopPropagation();
    };
    window.addEventListener('keydown', onKeyDown, true);
    return () => window.removeEventListener('keydown', onKeyDown, true);
  }, []);
}

/** The IDE: top bar, file tree, tabs and editor, status bar. */
export default function Workspace() {
  useShortcuts();
  return (
    <div className="workspace">
      <TopBar />
      <ClosedBanner />
      <div className="workspace-body">
        <FileTree />
        <main className="editor-column">
          <Tabs />
          <AgentErrorBanner />
          <EditorPane />
        </main>
      </div>
      <StatusBar />
      <ShareDialog />
      <QuickOpen />
      <Notice />
    </div>
  );
}
