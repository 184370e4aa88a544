import { useConnection } from '../stores/connectionStore';
import { selectChanges, selectGit, toggleChanges, useProject } from '../stores/projectStore';
import { toggleSidebar, usePalette } from '../stores/paletteStore';
import { openShareDialog } from '../stores/shareStore';
import { selectStreamingTurn, setAgentPanelOpen, useThread } from '../stores/threadStore';
import { DisplayNameInput } from './DisplayNameInput';
import { Icon } from './Icon';
import { PlaygroundReset } from './PlaygroundControls';
import { RecordButton } from './RecordButton';
import { PresenceBar } from './PresenceBar';
import { RoleBadge } from './RoleBadge';
import { useShortcut, withKey } from '../stores/settingsStore';

export function TopBar() {
  const workspaceName = useConnection((s) => s.workspaceName);
  // In a cluster, which gateway this tab landed on (its id in that gateway's /healthz).
  const gateway = useConnection((s) => (s.status.kind === 'open' ? (s.status.gateway ?? null) : null));
  // Links are the owner's to manage (the gateway refuses anyone else).
  const canShare = useConnection((s) => s.role === 'owner' && s.status.kind !== 'closed');
  return (
    <header className="top-bar">
      <SidebarToggle />
      <a className="brand" href="/" title="Flint home">
        <span className="brand-mark">◆</span> <span className="brand-name">Flint</span>
      </a>
      <span className="top-sep">/</span>
      <span className="workspace-name" data-testid="workspace-name" title={gateway ? `Served by gateway ${gateway}` : undefined}>
        {workspaceName ?? '…'}
      </span>
      <RoleBadge />
      <span className="top-spacer" />
      <PresenceBar />
      <DisplayNameInput />
      <ChangesToggle />
      <AgentToggle />
      <PlaygroundReset />
      <RecordButton />
      {canShare && (
        <button type="button" className="button button--primary share-button" data-testid="share-button" aria-label="Share" title="Share the workspace" onClick={openShareDialog}>
          <Icon name="share" /> <span className="button-label">Share</span>
        </button>
      )}
    </header>
  );
}

/** Shows and hides the sidebar; on a narrow window (where Ctrl+B is far away) the only way to the tree. */
function SidebarToggle() {
  const hidden = usePalette((s) => s.sidebarHidden);
  return (
    <button type="button" className="icon-button sidebar-toggle" data-testid="sidebar-toggle" aria-pressed={!hidden} aria-label={hidden ? 'Show the sidebar' : 'Hide the sidebar'} title={`${hidden ? 'Show' : 'Hide'} the sidebar (${sidebarShortcut})`} onClick={toggleSidebar}>
      <Icon name="sidebar" />
    </button>
  );
}

const sidebarShortcut = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform) ? '⌘+B' : 'Ctrl+B';

/** Shows the Changes view in the sidebar: the branch and how many files changed. Only where git is. */
function ChangesToggle() {
  const hasGit = useProject((s) => selectGit(s) !== null);
  const branch = useProject((s) => selectGit(s)?.branch ?? null);
  const count = useProject((s) => selectChanges(s).length);
  const open = useProject((s) => s.changesOpen);
  const changesKey = useShortcut('changes');
  if (!hasGit) return null;
  return (
    <button
      type="button"
      className={`button changes-toggle${open ? ' changes-toggle--open' : ''}`}
      data-testid="changes-toggle"
      aria-pressed={open}
      title={withKey(open ? 'Back to the files' : 'Show what changed since the last commit', changesKey)}
      onClick={() => toggleChanges()}
    >
      <Icon name="branch" /> <span className="changes-toggle-branch">{branch ?? 'detached'}</span>
      {count > 0 && (
        <span className="changes-count" data-testid="changes-count">
          {count}
        </span>
      )}
    </button>
  );
}

/** Opens and closes the agent panel; pulses while the agent works and the panel is closed. */
function AgentToggle() {
  const open = useThread((s) => s.panelOpen);
  const live = useThread((s) => selectStreamingTurn(s) !== null);
  const panelKey = useShortcut('agent-panel');
  return (
    <button
      type="button"
      className={`button agent-toggle${open ? ' agent-toggle--open' : ''}${live && !open ? ' agent-toggle--live' : ''}`}
      data-testid="agent-panel-toggle"
      aria-pressed={open}
      title={withKey(`${open ? 'Close' : 'Open'} the agent panel`, panelKey)}
      onClick={() => setAgentPanelOpen(!open)}
    >
      <Icon name="spark" /> <span className="button-label">Agent</span>
    </button>
  );
}
