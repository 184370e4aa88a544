import { useEffect } from 'react';
import { selectCanEdit, useConnection } from '../stores/connectionStore';
import { selectGit, toggleChanges, useProject } from '../stores/projectStore';
import { requestThreadInputFocus, setAgentPanelOpen, useThread } from '../stores/threadStore';
import { toggleSidebar, usePalette } from '../stores/paletteStore';
import { openSearch, useSearch } from '../stores/searchStore';
import { closeTab, requestCreate, requestEditorFocus, useWorkspace } from '../stores/workspaceStore';
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
import { TopBar } from './TopBar';

/**
 * Ctrl/Cmd-L: opens the agent panel with the keyboard in its input; from elsewhere in the IDE
 * it moves the keyboard there; from inside the panel it closes it and goes back to the editor.
 */
function toggleAgentPanel(): void {
  const inPanel = document.activeElement?.closest('.agent-panel') != null;
  if (!useThread.getState().panelOpen) setAgentPanelOpen(true);
  else if (!inPanel) requestThreadInputFocus();
  else {
    setAgentPanelOpen(false);
    requestEditorFocus();
  }
}

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
      if ((event.ctrlKey || event.metaKey) && !event.altKey && !event.shiftKey && event.code === 'KeyL') {
        // Over Monaco's "expand line selection" and the browser's address bar, as in other AI editors.
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
