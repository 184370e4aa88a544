import { baseName } from '@flint/protocol';
import { useEffect, useRef, useState } from 'react';
import { recentAt } from '../stores/editorGroups';
import { openFileInGroup, requestEditorFocus, useWorkspace } from '../stores/workspaceStore';

interface Switching {
  group: number;
  /** The group's files, most recently used first, as they were when Ctrl+Tab was first pressed. */
  order: readonly string[];
  at: number;
}

/**
 * Ctrl+Tab / Ctrl+Shift+Tab, as in VS Code: while Ctrl is held, a list of the focused group's
 * files in the order they were last used; each Tab moves down it, letting go of Ctrl shows the
 * file picked. (Chromium keeps Ctrl+Tab for its own tabs in a normal window; an installed app
 * window and other browsers pass it on.)
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
      if (event.key === 'Tab' && event.ctrlKey && !event.altKey && !event.metaKey) {
        event.preventDefault();
        event.stopPropagation();
        const step = event.shiftKey ? -1 : 1;
        if (state) {
          setSwitching({ ...state, at: (state.at + step + state.order.length) % state.order.length });
          return;
        }
        const { groups, focusedGroup } = useWorkspace.getState();
        const group = groups[focusedGroup];
        if (!group || recentAt(group, 1) === null) return;
        const order = group.tabs.map((_, i) => recentAt(group, i)).filter((id): id is string => id !== null);
        setSwitching({ group: focusedGroup, order, at: (step + order.length) % order.length });
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
      if (event.key === 'Control' && current.current) finish(true);
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
