import { baseName } from '@flint/protocol';
import { useMemo } from 'react';
import { usePresence } from '../stores/presenceStore';
import { closeTab, openFileById, useWorkspace } from '../stores/workspaceStore';
import { Icon } from './Icon';
import { initials } from './PresenceBar';
import { useShortcut, withKey } from '../stores/settingsStore';

/** Open files. Middle-click or × closes; coloured initials show who else has the file active. */
export function Tabs() {
  const closeKey = useShortcut('close-tab');
  const tabs = useWorkspace((s) => s.tabs);
  const pathById = useWorkspace((s) => s.pathById);
  const activeFileId = useWorkspace((s) => s.activeFileId);
  const peers = usePresence((s) => s.peers);

  const names = useMemo(() => {
    // Two tabs named index.ts get their folder added, as in VS Code.
    const counts = new Map<string, number>();
    for (const id of tabs) {
      const name = baseName(pathById.get(id) ?? '');
      counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    return counts;
  }, [tabs, pathById]);

  if (tabs.length === 0) return <div className="tabs tabs--empty" />;
  return (
    <div className="tabs" role="tablist" aria-label="Open files">
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
            role="tab"
            aria-selected={active}
            title={path}
            onClick={() => openFileById(fileId)}
            onAuxClick={(event) => {
              if (event.button === 1) closeTab(fileId);
            }}
          >
            <span className="tab-name">{name}</span>
            {(names.get(name) ?? 0) > 1 && folder && <span className="tab-folder">{folder}</span>}
            {here.slice(0, 3).map((peer) => (
              // Initials, not a dot: a dot on a tab reads as VS Code's "unsaved".
              <span key={peer.clientId} className="tab-peer" data-testid="tab-peer" style={{ background: peer.user.color }} title={`${peer.user.name} is here`}>
                {initials(peer.user.name)}
              </span>
            ))}
            {/* Not a button inside role=tab (axe: nested-interactive): the mouse's close; the keyboard's is Alt+W (Settings may change it). */}
            <span
              className="tab-close"
              aria-hidden="true"
              data-testid="tab-close"
              title={withKey('Close', closeKey)}
              onClick={(event) => {
                event.stopPropagation();
                closeTab(fileId);
              }}
            >
              <Icon name="close" />
            </span>
          </div>
        );
      })}
    </div>
  );
}
