import { useConnection } from '../stores/connectionStore';
import { openShareDialog } from '../stores/shareStore';
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
      {canShare && (
        <button type="button" className="button button--primary" data-testid="share-button" onClick={openShareDialog}>
          <Icon name="share" /> Share
        </button>
      )}
    </header>
  );
}
