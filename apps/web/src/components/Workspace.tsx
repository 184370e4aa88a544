import { useEffect, useRef, type CSSProperties } from 'react';
import { goBackOrForward } from '../editor/EditorController';
import { selectCanEdit, useConnection } from '../stores/connectionStore';
import { selectGit, toggleChanges, useProject } from '../stores/projectStore';
import { closeActiveTab, editorWidgetOwnsKey, focusGroupEditor, toggleAgentPanel } from '../stores/appCommands';
import { toggleProblems } from '../stores/problemsStore';
import { toggleSidebar, usePalette } from '../stores/paletteStore';
import { openSearch, useSearch } from '../stores/searchStore';
import { toggleTerminalPanel } from '../stores/terminalStore';
import { requestCreate, splitEditor, useWorkspace } from '../stores/workspaceStore';
import { AgentPanel } from './AgentPanel';
import { ChangesView } from './ChangesView';
import { CommandPalette } from './CommandPalette';
import { ClosedBanner } from './ClosedBanner';
import { EditorGroups } from './EditorGroups';
import { FileTree } from './FileTree';
import { Notice } from './Notice';
import { ProblemsPanel } from './ProblemsPanel';
import { QuickOpen } from './QuickOpen';
import { SearchPanel } from './SearchPanel';
import { ShareDialog } from './ShareDialog';
import { SidebarResizer } from './SidebarResizer';
import { StatusBar } from './StatusBar';
import { TabSwitcher } from './TabSwitcher';
import { TerminalPanel } from './TerminalPanel';
import { ReplayBar } from './ReplayBar';
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
      if ((event.ctrlKey || event.metaKey) && !event.altKey && !event.shiftKey && event.code === 'Backslash') {
        // Split the editor to the right, as in VS Code.
        event.preventDefault();
        event.stopPropagation();
        splitEditor();
        return;
      }
      if ((event.ctrlKey || event.metaKey) && !event.altKey && !event.shiftKey && /^Digit[1-3]$/.test(event.code)) {
        // Into editor group 1, 2, 3, as in VS Code (a browser window may keep these for its tabs).
        event.preventDefault();
        event.stopPropagation();
        focusGroupEditor(Number(event.code.slice(5)) - 1);
        return;
      }
      if ((event.ctrlKey || event.metaKey) && !event.altKey && event.shiftKey && event.code === 'KeyM') {
        // The Problems panel, as in VS Code.
        event.preventDefault();
        event.stopPropagation();
        toggleProblems();
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
        // Back and forward through where the caret has been, as in VS Code (after F12). Never the
        // browser's Back and Forward, which would leave the IDE; its toolbar button still does.
        // In a text field it is nothing (the field has no use for it either).
        const inField = event.target instanceof Element && event.target.closest('input, textarea') !== null && event.target.closest('.monaco-editor') === null;
        if (!inField) goBackOrForward(key === 'ArrowLeft' ? -1 : 1);
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

/** Below this width the sidebar comes over the editor instead of beside it (styles.css says the same). */
const narrowWindow = '(max-width: 600px)';

/**
 * On a narrow window (a phone, a sliver of a screen) the sidebar starts hidden and, once shown
 * over the editor, goes away when a file is picked in it.
 */
function useNarrowWindow(): void {
  useEffect(() => {
    const query = window.matchMedia(narrowWindow);
    const hide = () => {
      if (query.matches) usePalette.setState({ sidebarHidden: true });
    };
    hide();
    query.addEventListener('change', hide);
    const stop = useWorkspace.subscribe((state, previous) => {
      if (state.activeFileId !== previous.activeFileId && previous.indexSynced) hide();
    });
    return () => {
      query.removeEventListener('change', hide);
      stop();
    };
  }, []);
}

/** The IDE: top bar, sidebar (files, changes or search), the editor groups and Problems, the agent panel, status bar. */
export default function Workspace() {
  useShortcuts();
  useNarrowWindow();
  // The tree stays mounted under the Changes view: its folds and selection survive the switch.
  const sidebarHidden = usePalette((s) => s.sidebarHidden);
  const showSearch = useSearch((s) => s.open);
  const showChanges = useProject((s) => s.changesOpen && selectGit(s) !== null) && !showSearch;
  const sidebarWidth = usePalette((s) => s.sidebarWidth);
  const body = useRef<HTMLDivElement>(null);
  const style = sidebarWidth === null ? undefined : ({ '--sidebar-width': `${sidebarWidth}px` } as CSSProperties);
  return (
    <div className="workspace">
      <TopBar />
      <ReplayBar />
      <ClosedBanner />
      <div className="workspace-body" ref={body} style={style}>
        <FileTree hidden={showChanges || showSearch || sidebarHidden} />
        {showChanges && !sidebarHidden && <ChangesView />}
        {showSearch && !sidebarHidden && <SearchPanel />}
        {!sidebarHidden && <SidebarResizer sidebar={() => body.current?.querySelector<HTMLElement>(':scope > .sidebar:not([hidden])') ?? null} />}
        <main className="editor-column">
          <EditorGroups />
          <ProblemsPanel />
          <TerminalPanel />
        </main>
        <AgentPanel />
      </div>
      <StatusBar />
      <ShareDialog />
      <QuickOpen />
      <CommandPalette />
      <TabSwitcher />
      <Notice />
    </div>
  );
}
