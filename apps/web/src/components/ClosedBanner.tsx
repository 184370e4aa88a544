import { useConnection } from '../stores/connectionStore';

/**
 * A permanent close (revoked or expired link, wrong workspace, outdated page): the client has
 * stopped reconnecting, the editor is read-only, and this says what happened and what to do.
 */
export function ClosedBanner() {
  const status = useConnection((s) => s.status);
  if (status.kind !== 'closed') return null;
  return (
    <div className="closed-banner" data-testid="closed-banner" role="alert">
      <strong>Disconnected.</strong> <span>{status.message}</span>
      <span className="closed-actions">
        <button type="button" className="button" onClick={() => window.location.reload()}>
          Reload
        </button>
        <a className="button" href="/">
          New workspace
        </a>
      </span>
    </div>
  );
}
