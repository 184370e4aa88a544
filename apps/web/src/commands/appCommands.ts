import { goBackOrForward } from '../editor/EditorController';
import { showEditorCommands } from '../editor/editorCommands';
import { agentShortcuts } from '../stores/agentMessages';
import { selectCanEdit, useConnection } from '../stores/connectionStore';
import { requestQuickOpen, toggleSidebar, usePalette } from '../stores/paletteStore';
import { follow, usePresence } from '../stores/presenceStore';
import { downloadZip } from '../stores/projectTransfers';
import { selectGit, toggleChanges, useProject } from '../stores/projectStore';
import { openSearch } from '../stores/searchStore';
import { openShareDialog } from '../stores/shareStore';
import { requestThreadInputFocus, setAgentPanelOpen, useThread } from '../stores/threadStore';
import { closeActiveTab, focusGroupEditor, runTabAction } from '../stores/appCommands';
import { toggleProblems, useProblems } from '../stores/problemsStore';
import { recentAt } from '../stores/editorGroups';
import { openFileInGroup, requestCreate, requestEditorFocus, splitEditor, useWorkspace } from '../stores/workspaceStore';

const isMac = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform);
const mod = isMac ? '⌘' : 'Ctrl';
const alt = isMac ? '⌥' : 'Alt';

/** The palette's own key, and the others it lists, as the tooltips spell them. */
export const appShortcuts = {
  palette: `${mod}+Shift+P`,
  quickOpen: `${mod}+P`,
  search: `${mod}+Shift+F`,
  sidebar: `${mod}+B`,
  changes: `${mod}+Shift+G`,
  agentPanel: agentShortcuts.panel,
  inlineEdit: agentShortcuts.prompt,
  newFile: `${alt}+N`,
  newFolder: `${alt}+Shift+N`,
  closeTab: `${alt}+W`,
  split: `${mod}+\\`,
  focusGroup: (n: number) => `${mod}+${n}`,
  problems: `${mod}+Shift+M`,
  recentTab: 'Ctrl+Tab',
  back: `${alt}+←`,
  forward: `${alt}+→`,
  editorCommands: 'F1',
};

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
  const commands: AppCommand[] = [
    { id: 'quick-open', title: 'Go to file…', shortcut: appShortcuts.quickOpen, run: requestQuickOpen },
    { id: 'search', title: 'Search across files', shortcut: appShortcuts.search, run: openSearch },
    { id: 'agent-panel', title: panelOpen ? 'Close the agent panel' : 'Open the agent panel', shortcut: appShortcuts.agentPanel, run: () => (panelOpen ? setAgentPanelOpen(false) : (setAgentPanelOpen(true), requestThreadInputFocus())) },
  ];
  commands.push({ id: 'sidebar', title: usePalette.getState().sidebarHidden ? 'Show the sidebar' : 'Hide the sidebar', shortcut: appShortcuts.sidebar, run: toggleSidebar });
  if (hasGit) commands.push({ id: 'changes', title: 'Show changes since the last commit', shortcut: appShortcuts.changes, run: () => void toggleChanges() });
  // Links are the owner's to manage: the gateway refuses anyone else.
  if (useConnection.getState().role === 'owner') commands.push({ id: 'share', title: 'Share the workspace…', run: openShareDialog });
  if (canEdit) {
    commands.push(
      { id: 'new-file', title: 'New file', shortcut: appShortcuts.newFile, run: () => requestCreate('file') },
      { id: 'new-folder', title: 'New folder', shortcut: appShortcuts.newFolder, run: () => requestCreate('folder') },
    );
  }
  if (activeFileId !== null) {
    commands.push(
      { id: 'close-tab', title: 'Close the tab', shortcut: appShortcuts.closeTab, run: closeActiveTab },
      { id: 'close-other-tabs', title: 'Close the other tabs', run: () => runTabAction('close-others', focusedGroup, activeFileId) },
      { id: 'close-all-tabs', title: 'Close all the tabs of this group', run: () => runTabAction('close-all', focusedGroup, activeFileId) },
      { id: 'recent-tab', title: 'Switch to the tab used before', shortcut: appShortcuts.recentTab, run: () => switchToRecent(focusedGroup) },
      { id: 'split', title: 'Split the editor right', shortcut: appShortcuts.split, run: splitEditor },
      { id: 'reveal', title: 'Reveal the file in the file tree', run: () => runTabAction('reveal', focusedGroup, activeFileId) },
    );
  }
  groups.forEach((_, i) => {
    if (groups.length > 1 && i !== focusedGroup) commands.push({ id: `focus-group-${i + 1}`, title: `Go to editor group ${i + 1}`, shortcut: appShortcuts.focusGroup(i + 1), run: () => focusGroupEditor(i) });
  });
  commands.push(
    { id: 'problems', title: useProblems.getState().open ? 'Close Problems' : 'Show Problems', shortcut: appShortcuts.problems, run: toggleProblems },
    { id: 'go-back', title: 'Go back (where the caret was)', shortcut: appShortcuts.back, run: () => void goBackOrForward(-1) },
    { id: 'go-forward', title: 'Go forward', shortcut: appShortcuts.forward, run: () => void goBackOrForward(1) },
  );
  for (const peer of peers) {
    const isFollowed = peer.clientId === following;
    commands.push({ id: `follow-${peer.clientId}`, title: isFollowed ? `Stop following ${peer.user.name}` : `Follow ${peer.user.name}`, run: () => follow(isFollowed ? null : peer.clientId) });
  }
  commands.push(
    { id: 'download', title: 'Download the workspace as a zip', run: () => void downloadZip('') },
    { id: 'focus-editor', title: 'Go to the editor', run: requestEditorFocus },
  );
  if (activeFileId !== null) commands.push({ id: 'editor-commands', title: 'Show all editor commands', shortcut: appShortcuts.editorCommands, run: () => void showEditorCommands() });
  return commands;
}

/** Ctrl+Tab let go at once: the group's file used before the one shown. */
function switchToRecent(group: number): void {
  const editorGroup = useWorkspace.getState().groups[group];
  const fileId = editorGroup ? recentAt(editorGroup, 1) : null;
  if (fileId !== null) openFileInGroup(group, fileId, { focus: true });
}
