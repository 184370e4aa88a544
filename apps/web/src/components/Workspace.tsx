import { useEffect, useRef, type CSSProperties } from 'react';
import { handleCommandKey } from '../commands/boundCommands';
import { goBackOrForward } from '../editor/EditorController';
import { editorWidgetOwnsKey } from '../stores/appCommands';
import { selectGit, useProject } from '../stores/projectStore';
import { usePalette } from '../stores/paletteStore';
import { useSearch } from '../stores/searchStore';
import { useWorkspace } from '../stores/workspaceStore';
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
import { SettingsDialog } from './SettingsDialog';
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
      // The app's commands, by the person's keys (Settings); each yields to a widget that owns the key.
      if (handleCommandKey(event)) return;
      if (event.altKey && !event.ctrlKey && !event.metaKey && !event.shiftKey && (event.code === 'ArrowLeft' || event.code === 'ArrowRight')) {
        // Back and forward through where the caret has been, as in VS Code (after F12). Never the
        // browser's Back and Forward, which would leave the IDE; its toolbar button still does.
        // In a text field it is nothing (the field has no use for it either). Not in the key
        // table: the browser's meaning has to be kept off it whatever a person binds.
        if (editorWidgetOwnsKey(event)) return;
        event.preventDefault();
        event.stopPropagation();
        const inField = event.target instanceof Element && event.target.closest('input, textarea') !== null && event.target.closest('.monaco-editor') === null;
        if (!inField) goBackOrForward(event.code === 'ArrowLeft' ? -1 : 1);
      }
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
      <SettingsDialog />
      <Notice />
    </div>
  );
}
