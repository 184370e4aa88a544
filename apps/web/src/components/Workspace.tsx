import { useEffect } from 'react';
import { handleCommandKey } from '../commands/boundCommands';
import { selectGit, useProject } from '../stores/projectStore';
import { usePalette } from '../stores/paletteStore';
import { useSearch } from '../stores/searchStore';
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
import { SettingsDialog } from './SettingsDialog';
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
      // The app's commands, by the person's keys (Settings); each yields to a widget that owns the key.
      if (handleCommandKey(event)) return;
      if (event.altKey && !event.ctrlKey && !event.metaKey && !event.shiftKey && (event.code === 'ArrowLeft' || event.code === 'ArrowRight')) {
        // The browser's Back and Forward: by a VS Code habit (go back after F12) they would
        // leave the IDE. The toolbar's Back button still does.
        event.preventDefault();
        event.stopPropagation();
      }
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
      <SettingsDialog />
      <Notice />
    </div>
  );
}
