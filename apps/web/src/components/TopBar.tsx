import { agentShortcuts } from '../stores/agentMessages';
import { useConnection } from '../stores/connectionStore';
import { openShareDialog } from '../stores/shareStore';
import { selectStreamingTurn, setAgentPanelOpen, useThread } from '../stores/threadStore';
import { DisplayNameInput } from './DisplayNameInput';
import { Icon } from './Icon';
import { PresenceBar } from './PresenceBar';
import { RoleBadge } from './RoleBadge';

export function TopBar() {
  const workspaceName = useConnection((s) => s.workspaceName);
  const canShare = useConnection((s) => s.role !== null && s.role !== 'viewer' && s.status.kind !== 'closed');
  return (
    <header className="top-bar">
      <a className="brand" href="/" title="Flint home">
        <span className="brand-mark">◆</span> Flint
      </a>
      <span className="top-sep">/</span>
      <span className="workspace-name" data-testid="workspace-name">
        {workspaceName ?? '…'}
      </span>
      <RoleBadge />
      <span className="top-spacer" />
      <PresenceBar />
      <DisplayNameInput />
      <AgentToggle />
      {canShare && (
        <button type="button" className="button button--primary" data-testid="share-button" onClick={openShareDialog}>
          <Icon name="share" /> Share
        </button>
      )}
    </header>
  );
}

/** Opens and closes the agent panel; pulses while the agent works and the panel is closed. */
function AgentToggle() {
  const open = useThread((s) => s.panelOpen);
  const live = useThread((s) => selectStreamingTurn(s) !== null);
  return (
    <button
      type="button"
      className={`button agent-toggle${open ? ' agent-toggle--open' : ''}${live && !open ? ' agent-toggle--live' : ''}`}
      data-testid="agent-panel-toggle"
      aria-pressed={open}
      title={`${open ? 'Close' : 'Open'} the agent panel (${agentShortcuts.panel})`}
      onClick={() => setAgentPanelOpen(!open)}
    >
      <Icon name="spark" /> Agent
    </button>
  );
}
