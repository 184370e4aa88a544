import { closeActiveTab, editorWidgetOwnsKey, focusGroupEditor, runTabAction, toggleAgentPanel } from '../stores/appCommands';
import { selectCanEdit, useConnection } from '../stores/connectionStore';
import { requestQuickOpen, setPaletteOpen, toggleSidebar, usePalette } from '../stores/paletteStore';
import { toggleChanges } from '../stores/projectStore';
import { openSearch } from '../stores/searchStore';
import { changeFontSize, currentKeybindings, openSettings, setFontSize, toggleWordWrap } from '../stores/settingsStore';
import { recentAt } from '../stores/editorGroups';
import { toggleProblems } from '../stores/problemsStore';
import { toggleTerminalPanel } from '../stores/terminalStore';
import { openFileInGroup, requestCreate, splitEditor, useWorkspace } from '../stores/workspaceStore';
import { defaultSettings } from '../memory/userSettings';
import { chordOf, commandForChord, type BoundCommandId } from './keybindings';

/**
 * Runs a command that has a key; false when it does not apply now (no git for Changes, a viewer's
 * New file), so the key goes on to the browser or the editor.
 */
export function runBoundCommand(id: BoundCommandId): boolean {
  switch (id) {
    case 'command-palette':
      setPaletteOpen(!usePalette.getState().open);
      return true;
    case 'quick-open':
      requestQuickOpen();
      return true;
    case 'search':
      openSearch();
      return true;
    case 'sidebar':
      toggleSidebar();
      return true;
    case 'changes':
      return toggleChanges();
    case 'agent-panel':
      toggleAgentPanel();
      return true;
    case 'new-file':
    case 'new-folder':
      if (!selectCanEdit(useConnection.getState())) return false;
      requestCreate(id === 'new-file' ? 'file' : 'folder');
      return true;
    case 'close-tab':
      closeActiveTab();
      return true;
    case 'settings':
      openSettings();
      return true;
    case 'word-wrap':
      toggleWordWrap();
      return true;
    case 'font-bigger':
      changeFontSize(1);
      return true;
    case 'font-smaller':
      changeFontSize(-1);
      return true;
    case 'font-reset':
      setFontSize(defaultSettings.fontSize);
      return true;
    case 'split':
      // With no file open it splits nothing (splitRight), and the key is still the IDE's.
      splitEditor();
      return true;
    case 'focus-group-1':
    case 'focus-group-2':
    case 'focus-group-3':
      focusGroupEditor(Number(id.slice(-1)) - 1);
      return true;
    case 'recent-tab':
    case 'recent-tab-back':
      return switchToRecent();
    case 'close-other-tabs':
    case 'close-all-tabs': {
      const fileId = activeFile();
      if (fileId === null) return false;
      runTabAction(id === 'close-other-tabs' ? 'close-others' : 'close-all', useWorkspace.getState().focusedGroup, fileId);
      return true;
    }
    case 'problems':
      toggleProblems();
      return true;
    case 'terminal':
      toggleTerminalPanel();
      return true;
  }
}

/** The focused group's file, or null. */
function activeFile(): string | null {
  const { groups, focusedGroup } = useWorkspace.getState();
  return groups[focusedGroup]?.activeFileId ?? null;
}

/** Ctrl+Tab let go at once (or from the palette): the focused group's file used before the one shown. */
function switchToRecent(): boolean {
  const { groups, focusedGroup } = useWorkspace.getState();
  const group = groups[focusedGroup];
  const fileId = group ? recentAt(group, 1) : null;
  if (fileId === null) return false;
  openFileInGroup(focusedGroup, fileId, { focus: true });
  return true;
}

/** The commands whose keys TabSwitcher handles itself: held, they walk a list (see there). */
export const heldCommands: readonly BoundCommandId[] = ['recent-tab', 'recent-tab-back'];

/**
 * The window's key handler for the app's commands, by the person's key table: a key another
 * command held before rebinding does nothing here any more. Yields to what owns the key: an
 * open editor widget (Find's Alt toggles, the rename box, suggestions), the search panel's
 * Alt toggles, and the Settings key recorder.
 */
/** The commands whose keys work inside a terminal too; every other key goes to the shell. */
const skipShell: readonly BoundCommandId[] = ['command-palette', 'quick-open', 'terminal', 'search', 'sidebar', 'settings', 'problems', 'focus-group-1', 'focus-group-2', 'focus-group-3', 'recent-tab', 'recent-tab-back'];

export function handleCommandKey(event: KeyboardEvent): boolean {
  const target = event.target instanceof Element ? event.target : null;
  if (target?.closest('[data-key-recorder]')) return false;
  if (editorWidgetOwnsKey(event)) return false;
  const chord = chordOf(event);
  if (chord === null) return false;
  // In the search panel Alt+C/R/W are its case, regex and whole-word toggles.
  if (chord.startsWith('Alt+') && target?.closest('.search-panel')) return false;
  const table = currentKeybindings();
  // Ctrl++ is Ctrl+Shift+= on most keyboards: it means what Ctrl+= means, unless it has its own command.
  const id = commandForChord(table, chord) ?? (chord.endsWith('Shift+=') ? commandForChord(table, chord.replace('Shift+', '')) : null);
  if (id === null || heldCommands.includes(id)) return false;
  // In a terminal the shell gets its keys (Ctrl+L clears, Ctrl+B moves back, Alt+N, Alt+W…): only
  // the commands that move around the IDE skip it, as VS Code's commandsToSkipShell.
  if (target?.closest('.xterm') && !skipShell.includes(id)) return false;
  if (!runBoundCommand(id)) return false;
  event.preventDefault();
  event.stopPropagation();
  return true;
}
