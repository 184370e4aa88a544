import { useEffect } from 'react';
import { selectCanEdit, useConnection } from '../stores/connectionStore';
import { selectGit, toggleChanges, useProject } from '../stores/projectStore';
import { closeActiveTab, editorWidgetOwnsKey, toggleAgentPanel } from '../stores/appCommands';
import { toggleSidebar, usePalette } from '../stores/paletteStore';
import { openSearch, useSearch } from '../stores/searchStore';
import { toggleTerminalPanel } from '../stores/terminalStore';
import { requestCreate } from '../stores/workspaceStore';
import { AgentErrorBanner } from './AgentErrorBanner';
import { AgentPanel } from './AgentPanel';
import { ChangesView } from './ChangesView';
import { CommandPalette } from './CommandPalette';
import { ClosedBanner } from './ClosedBanner';
import { EditorPane } from './EditorPane';
import { FileTree } from './FileTree';
import { Notice } from './Notice';
import { QuickOpen } from './QuickOpen';
import { SearchPanel } from './SearchPanel';
import { ShareDialog } from './ShareDialog';
import { StatusBar } from './StatusBar';
import { Tabs } from './Tabs';
import { TerminalPanel } from './TerminalPanel';
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
      if (event.ctrlKey && !event.altKey && !event.shiftKey && event.code === 'Backquote') {
        // The terminal panel, as in VS Code (Ctrl+` on macOS too); over the terminal's own keys.
        event.preventDefault();
        event.stopPropagation();
        toggleTerminalPanel();
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
      if ((event.ctrlKey || event.metaKey) && !event.altKey && !event.shiftKey && event.code === 'KeyB') {
        // Toggle the sidebar, as in VS Code; Monaco and Chromium have nothing on it.
        event.preventDefault();
        event.stopPropagation();
        toggleSidebar();
        return;
      }
      if ((event.ctrlKey || event.metaKey) && !event.altKey && event.shiftKey && event.code === 'KeyF') {
        // Search across files, as in VS Code; over Monaco, which has nothing on it.
        event.preventDefault();
        event.stopPropagation();
        openSearch();
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
      } else if (key === 'KeyW' && !event.shiftKey && !(event.target instanceof Element && event.target.closest('.search-panel'))) {
        // In the search panel Alt+W is "whole word".
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
  const sidebarHidden = usePalette((s) => s.sidebarHidden);
  const showSearch = useSearch((s) => s.open);
  const showChanges = useProject((s) => s.changesOpen && selectGit(s) !== null) && !showSearch;
  return (
    <div className="workspace">
      <TopBar />
      <ClosedBanner />
      <div className="workspace-body">
        <FileTree hidden={showChanges || showSearch || sidebarHidden} />
        {showChanges && !sidebarHidden && <ChangesView />}
        {showSearch && !sidebarHidden && <SearchPanel />}
        <main className="editor-column">
          <Tabs />
          <AgentErrorBanner />
          <EditorPane />
          <TerminalPanel />
        </main>
        <AgentPanel />
      </div>
      <StatusBar />
      <ShareDialog />
      <QuickOpen />
      <CommandPalette />
      <Notice />
    </div>
  );
}
