import { useEffect } from 'react';
import { selectCanEdit, useConnection } from '../stores/connectionStore';
import { selectGit, toggleChanges, useProject } from '../stores/projectStore';
import { closeActiveTab, editorWidgetOwnsKey, toggleAgentPanel } from '../stores/appCommands';
import { requestCreate } from '../stores/workspaceStore';
import { AgentErrorBanner } from './AgentErrorBanner';
import { AgentPanel } from './AgentPanel';
import { ChangesView } from './ChangesView';
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
      // An open Find, rename box or suggestion list owns its keys; the app's shortcuts yield.
      if (editorWidgetOwnsKey(event)) return;
      if ((event.ctrlKey || event.metaKey) && !event.altKey && !event.shiftKey && event.code === 'KeyL') {
        // Over the browser's address bar, as in other AI editors; Monaco's "expand line
        // selection" gives the key up (appActions), so F1 says the same.
        event.preventDefault();
        event.stopPropagation();
        toggleAgentPanel();
        return;
      }
      if ((event.ctrlKey || event.metaKey) && !event.altKey && event.shiftKey && event.code === 'KeyG') {
        // The Changes view, as in other editors; over the browser's "find previous". Nothing without git.
        if (!toggleChanges()) return;
        event.preventDefault();
        event.stopPropagation();
        return;
      }
      if (!event.altKey || event.ctrlKey || event.metaKey) return;
      const key = event.code;
      if (key === 'KeyN' && selectCanEdit(useConnection.getState())) {
        requestCreate(event.shiftKey ? 'folder' : 'file');
      } else if (key === 'KeyW' && !event.shiftKey) {
        closeActiveTab();
      } else if ((key === 'ArrowLeft' || key === 'ArrowRight') && !event.shiftKey) {
        // The browser's Back and Forward: by a VS Code habit (go back after F12) they would
        // leave the IDE. The toolbar's Back button still does.
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

/** The IDE: top bar, file tree (or the Changes view), tabs and editor, the agent panel, status bar. */
export default function Workspace() {
  useShortcuts();
  // The tree stays mounted under the Changes view: its folds and selection survive the switch.
  const showChanges = useProject((s) => s.changesOpen && selectGit(s) !== null);
  return (
    <div className="workspace">
      <TopBar />
      <ClosedBanner />
      <div className="workspace-body">
        <FileTree hidden={showChanges} />
        {showChanges && <ChangesView />}
        <main className="editor-column">
          <Tabs />
          <AgentErrorBanner />
          <EditorPane />
        </main>
        <AgentPanel />
      </div>
      <StatusBar />
      <ShareDialog />
      <QuickOpen />
      <Notice />
    </div>
  );
}
