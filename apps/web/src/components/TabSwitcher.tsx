import { baseName } from '@flint/protocol';
import { useEffect, useRef, useState } from 'react';
import { chordOf } from '../commands/keybindings';
import { recentAt } from '../stores/editorGroups';
import { currentKeybindings } from '../stores/settingsStore';
import { openFileInGroup, requestEditorFocus, useWorkspace } from '../stores/workspaceStore';

interface Switching {
  group: number;
  /** The group's files, most recently used first, as they were when Ctrl+Tab was first pressed. */
  order: readonly string[];
  at: number;
  /** The modifier keys (KeyboardEvent.key) of the chord that opened the list: letting go of one picks. */
  held: readonly string[];
}

/** The modifiers a chord holds, as KeyboardEvent.key names them. */
function heldKeys(chord: string): string[] {
  const parts = chord.split('+');
  return [...(parts.includes('Mod') ? ['Control', 'Meta'] : []), ...(parts.includes('Alt') ? ['Alt'] : [])];
}

/**
 * Ctrl+Tab / Ctrl+Shift+Tab, as in VS Code: while Ctrl is held, a list of the focused group's
 * files in the order they were last used; each Tab moves down it, letting go of Ctrl shows the
 * file picked. (Chromium keeps Ctrl+Tab for its own tabs in a normal window; an installed app
 * window and other browsers pass it on.) The keys are the person's (the key table's recent-tab
 * and recent-tab-back); a key without Ctrl or Alt to hold switches at once.
 */
export function TabSwitcher() {
  const [switching, setSwitching] = useState<Switching | null>(null);
  const current = useRef<Switching | null>(null);
  current.current = switching;
  const pathById = useWorkspace((s) => s.pathById);

  useEffect(() => {
    const finish = (commit: boolean) => {
      const state = current.current;
      if (!state) return;
      setSwitching(null);
      const fileId = state.order[state.at];
      if (commit && fileId) openFileInGroup(state.group, fileId);
      requestEditorFocus();
    };
    const onKeyDown = (event: KeyboardEvent) => {
      const state = current.current;
      const chord = chordOf(event);
      const table = currentKeybindings();
      const forward = chord === table['recent-tab'];
      const backward = chord === table['recent-tab-back'];
      // While the list is up, Shift with the key walks it backwards, as in VS Code.
      const walking = state !== null && chord?.replace('+Shift', '') === table['recent-tab'];
      if (chord !== null && (forward || backward || walking)) {
        event.preventDefault();
        event.stopPropagation();
        const step = backward || (!forward && event.shiftKey) ? -1 : 1;
        if (state) {
          setSwitching({ ...state, at: (state.at + step + state.order.length) % state.order.length });
          return;
        }
        const { groups, focusedGroup } = useWorkspace.getState();
        const group = groups[focusedGroup];
        if (!group || recentAt(group, 1) === null) return;
        const order = group.tabs.map((_, i) => recentAt(group, i)).filter((id): id is string => id !== null);
        const held = heldKeys(chord);
        if (held.length === 0) {
          const fileId = order[(step + order.length) % order.length];
          if (fileId !== undefined) openFileInGroup(focusedGroup, fileId, { focus: true });
          return;
        }
        setSwitching({ group: focusedGroup, order, at: (step + order.length) % order.length, held });
      } else if (state && event.key === 'Escape') {
        event.preventDefault();
        event.stopPropagation();
        finish(false);
      } else if (state && event.key === 'Enter') {
        event.preventDefault();
        event.stopPropagation();
        finish(true);
      }
    };
    const onKeyUp = (event: KeyboardEvent) => {
      if (current.current?.held.includes(event.key)) finish(true);
    };
    const onBlur = () => finish(false);
    window.addEventListener('keydown', onKeyDown, true);
    window.addEventListener('keyup', onKeyUp, true);
    window.addEventListener('blur', onBlur);
    return () => {
      window.removeEventListener('keydown', onKeyDown, true);
      window.removeEventListener('keyup', onKeyUp, true);
      window.removeEventListener('blur', onBlur);
    };
  }, []);

  if (!switching) return null;
  return (
    <div className="tab-switcher" role="listbox" aria-label="Recently used files" data-testid="tab-switcher">
      {switching.order.map((fileId, i) => {
        const path = pathById.get(fileId) ?? '';
        return (
          <div key={fileId} className={i === switching.at ? 'tab-switcher-item tab-switcher-item--selected' : 'tab-switcher-item'} role="option" aria-selected={i === switching.at}>
            <span className="tab-switcher-name">{baseName(path)}</span>
            <span className="tab-switcher-folder">{path.slice(0, -baseName(path).length - 1)}</span>
          </div>
        );
      })}
    </div>
  );
}
