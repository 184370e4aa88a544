import { goBackOrForward } from '../editor/EditorController';
import { showEditorCommands } from '../editor/editorCommands';
import { selectCanEdit, useConnection } from '../stores/connectionStore';
import { usePalette } from '../stores/paletteStore';
import { follow, usePresence } from '../stores/presenceStore';
import { downloadZip } from '../stores/projectTransfers';
import { selectGit, useProject } from '../stores/projectStore';
import { openShareDialog } from '../stores/shareStore';
import { openSettings, setTheme, shortcutOf, toggleMinimap, useSettings } from '../stores/settingsStore';
import { requestThreadInputFocus, setAgentPanelOpen, useThread } from '../stores/threadStore';
import { runTabAction } from '../stores/appCommands';
import { useProblems } from '../stores/problemsStore';
import { useTerminals } from '../stores/terminalStore';
import { requestEditorFocus, useWorkspace } from '../stores/workspaceStore';
import { runBoundCommand } from './boundCommands';
import { boundCommandIds, displayChord, type BoundCommandId } from './keybindings';

const isBound = (id: string): id is BoundCommandId => (boundCommandIds as readonly string[]).includes(id);

/** One thing the palette can do: its title, its key if it has one, and whether it applies now. */
export interface AppCommand {
  id: string;
  title: string;
  shortcut?: string;
  run(): void;
}

/**
 * The app's commands as they stand now (who may edit, whether git is there, who is present):
 * what the top bar, the sidebar and the shortcuts do, in one list. Monaco's editor commands stay
 * behind F1, which the last entry opens.
 */
export function appCommands(): AppCommand[] {
  const canEdit = selectCanEdit(useConnection.getState());
  const { activeFileId, groups, focusedGroup } = useWorkspace.getState();
  const hasGit = selectGit(useProject.getState()) !== null;
  const panelOpen = useThread.getState().panelOpen;
  const { peers, following } = usePresence.getState();
  const bound = (id: BoundCommandId, title: string): AppCommand => ({ id, title, shortcut: shortcutOf(id), run: () => void runBoundCommand(id) });
  const commands: AppCommand[] = [
    bound('quick-open', 'Go to file…'),
    bound('search', 'Search across files'),
    { ...bound('agent-panel', panelOpen ? 'Close the agent panel' : 'Open the agent panel'), run: () => (panelOpen ? setAgentPanelOpen(false) : (setAgentPanelOpen(true), requestThreadInputFocus())) },
    bound('sidebar', usePalette.getState().sidebarHidden ? 'Show the sidebar' : 'Hide the sidebar'),
  ];
  if (hasGit) commands.push(bound('changes', 'Show changes since the last commit'));
  // Links are the owner's to manage: the gateway refuses anyone else.
  if (useConnection.getState().role === 'owner') commands.push({ id: 'share', title: 'Share the workspace…', run: openShareDialog });
  if (canEdit) commands.push(bound('new-file', 'New file'), bound('new-folder', 'New folder'));
  if (activeFileId !== null) {
    commands.push(
      bound('close-tab', 'Close the tab'),
      bound('close-other-tabs', 'Close the other tabs'),
      bound('close-all-tabs', 'Close all the tabs of this group'),
      bound('recent-tab', 'Switch to the tab used before'),
      bound('split', 'Split the editor right'),
      { id: 'reveal', title: 'Reveal the file in the file tree', run: () => runTabAction('reveal', focusedGroup, activeFileId) },
    );
  }
  groups.forEach((_, i) => {
    const id = `focus-group-${i + 1}`;
    if (groups.length > 1 && i !== focusedGroup && isBound(id)) commands.push(bound(id, `Go to editor group ${i + 1}`));
  });
  commands.push(
    bound('problems', useProblems.getState().open ? 'Close Problems' : 'Show Problems'),
    bound('terminal', useTerminals.getState().open ? 'Close the terminal' : 'Show the terminal'),
    // Alt+Left/Right stay off the key table (Workspace's shortcuts): the browser's Back must never have them.
    { id: 'go-back', title: 'Go back (where the caret was)', shortcut: displayChord('Alt+Left'), run: () => void goBackOrForward(-1) },
    { id: 'go-forward', title: 'Go forward', shortcut: displayChord('Alt+Right'), run: () => void goBackOrForward(1) },
  );
  for (const peer of peers) {
    const isFollowed = peer.clientId === following;
    commands.push({ id: `follow-${peer.clientId}`, title: isFollowed ? `Stop following ${peer.user.name}` : `Follow ${peer.user.name}`, run: () => follow(isFollowed ? null : peer.clientId) });
  }
  const { wordWrap, minimap } = useSettings.getState();
  commands.push(
    { id: 'download', title: 'Download the workspace as a zip', run: () => void downloadZip('') },
    { id: 'focus-editor', title: 'Go to the editor', run: requestEditorFocus },
    bound('settings', 'Preferences: Open Settings'),
    { id: 'color-theme', title: 'Preferences: Color Theme', run: () => openSettings('theme') },
    { id: 'keyboard-shortcuts', title: 'Preferences: Keyboard Shortcuts', run: () => openSettings('keys') },
    { id: 'theme-dark', title: 'Preferences: Color Theme: Dark', run: () => setTheme('dark') },
    { id: 'theme-light', title: 'Preferences: Color Theme: Light', run: () => setTheme('light') },
    { id: 'theme-high-contrast', title: 'Preferences: Color Theme: High Contrast', run: () => setTheme('high-contrast') },
    { id: 'theme-system', title: 'Preferences: Color Theme: Follow the System', run: () => setTheme('system') },
    bound('word-wrap', wordWrap ? 'View: Toggle Word Wrap (on)' : 'View: Toggle Word Wrap (off)'),
    { id: 'minimap', title: minimap ? 'View: Toggle Minimap (on)' : 'View: Toggle Minimap (off)', run: toggleMinimap },
    bound('font-bigger', 'Editor: Bigger font'),
    bound('font-smaller', 'Editor: Smaller font'),
    bound('font-reset', 'Editor: Default font size'),
  );
  if (activeFileId !== null) commands.push({ id: 'editor-commands', title: 'Show all editor commands', shortcut: 'F1', run: () => void showEditorCommands() });
  return commands;
}
