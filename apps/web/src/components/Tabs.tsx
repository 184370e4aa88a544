import { baseName } from '@flint/protocol';
import { useCallback, useMemo, useRef, useState, type KeyboardEvent, type MouseEvent } from 'react';
import { createPortal } from 'react-dom';
import { usePresence } from '../stores/presenceStore';
import { closeTab, openFileInGroup, requestEditorFocus, useWorkspace } from '../stores/workspaceStore';
import { Icon } from './Icon';
import { initials } from './PresenceBar';
import { useShortcut, withKey } from '../stores/settingsStore';
import { TabMenu, type TabMenuTarget } from './TabMenu';

/**
 * One editor group's open files. Middle-click or × closes; right click or Shift+F10 opens the
 * tab's menu; coloured initials show who else has the file active. One tab takes the keyboard
 * (the active one); arrow keys move between them, Enter or Space shows one.
 */
export function Tabs({ group }: { group: number }) {
  const closeKey = useShortcut('close-tab');
  const tabs = useWorkspace((s) => s.groups[group]?.tabs ?? noTabs);
  const activeFileId = useWorkspace((s) => s.groups[group]?.activeFileId ?? null);
  const focused = useWorkspace((s) => s.focusedGroup === group);
  const pathById = useWorkspace((s) => s.pathById);
  const peers = usePresence((s) => s.peers);
  const [menu, setMenu] = useState<TabMenuTarget | null>(null);
  const list = useRef<HTMLDivElement>(null);

  const names = useMemo(() => {
    // Two tabs named index.ts get their folder added, as in VS Code.
    const counts = new Map<string, number>();
    for (const id of tabs) {
      const name = baseName(pathById.get(id) ?? '');
      counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    return counts;
  }, [tabs, pathById]);

  const closeMenu = useCallback(
    (restoreFocus: boolean) => {
      const fileId = menu?.fileId;
      setMenu(null);
      if (restoreFocus && fileId) list.current?.querySelector<HTMLElement>(`[data-file-id="${CSS.escape(fileId)}"]`)?.focus();
    },
    [menu],
  );

  if (tabs.length === 0) return <div className="tabs tabs--empty" />;

  const openMenu = (fileId: string, event: MouseEvent | KeyboardEvent) => {
    event.preventDefault();
    const box = (event.currentTarget as HTMLElement).getBoundingClientRect();
    const x = 'clientX' in event && event.clientX > 0 ? event.clientX : box.left;
    const y = 'clientY' in event && event.clientY > 0 ? event.clientY : box.bottom;
    setMenu({ group, fileId, x, y });
  };

  const onKeyDown = (fileId: string, event: KeyboardEvent) => {
    const at = tabs.indexOf(fileId);
    const focusTab = (index: number) => {
      const id = tabs[(index + tabs.length) % tabs.length];
      if (id) list.current?.querySelector<HTMLElement>(`[data-file-id="${CSS.escape(id)}"]`)?.focus();
    };
    if ((event.shiftKey && event.key === 'F10') || event.key === 'ContextMenu') openMenu(fileId, event);
    else if (event.key === 'ArrowRight') focusTab(at + 1);
    else if (event.key === 'ArrowLeft') focusTab(at - 1);
    else if (event.key === 'Home') focusTab(0);
    else if (event.key === 'End') focusTab(tabs.length - 1);
    else if (event.key === 'Enter' || event.key === ' ') {
      openFileInGroup(group, fileId);
      requestEditorFocus();
    } else if (event.key === 'Delete') closeTab(fileId, group);
    else return;
    event.preventDefault();
    event.stopPropagation();
  };

  return (
    <div ref={list} className={focused ? 'tabs tabs--focused' : 'tabs'} role="tablist" aria-label={group === 0 ? 'Open files' : `Open files, group ${group + 1}`}>
      {tabs.map((fileId) => {
        const path = pathById.get(fileId) ?? '';
        const name = baseName(path);
        const folder = path.slice(0, -name.length - 1);
        const active = fileId === activeFileId;
        const here = peers.filter((p) => p.activeFile === path);
        return (
          <div
            key={fileId}
            className={active ? 'tab tab--active' : 'tab'}
            data-testid="tab"
            data-path={path}
            data-file-id={fileId}
            role="tab"
            aria-selected={active}
            aria-haspopup="menu"
            tabIndex={active ? 0 : -1}
            title={path}
            onClick={() => openFileInGroup(group, fileId)}
            onAuxClick={(event) => {
              if (event.button === 1) closeTab(fileId, group);
            }}
            onContextMenu={(event) => openMenu(fileId, event)}
            onKeyDown={(event) => onKeyDown(fileId, event)}
          >
            <span className="tab-name">{name}</span>
            {(names.get(name) ?? 0) > 1 && folder && <span className="tab-folder">{folder}</span>}
            {here.slice(0, 3).map((peer) => (
              // Initials, not a dot: a dot on a tab reads as VS Code's "unsaved".
              <span key={peer.clientId} className="tab-peer" data-testid="tab-peer" style={{ background: peer.user.color }} title={`${peer.user.name} is here`}>
                {initials(peer.user.name)}
              </span>
            ))}
            {/* Not a button inside role=tab (axe: nested-interactive): the mouse's close; the keyboard's is Delete on the tab, or Alt+W (Settings may change it). */}
            <span
              className="tab-close"
              aria-hidden="true"
              data-testid="tab-close"
              title={withKey('Close', closeKey)}
              onClick={(event) => {
                event.stopPropagation();
                closeTab(fileId, group);
              }}
            >
              <Icon name="close" />
            </span>
          </div>
        );
      })}
      {menu && createPortal(<TabMenu target={menu} onClose={closeMenu} />, document.body)}
    </div>
  );
}

const noTabs: readonly string[] = [];
