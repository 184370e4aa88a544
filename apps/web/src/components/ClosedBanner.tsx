import { CloseCode } from '@flint/protocol';
import { useConnection } from '../stores/connectionStore';

/** Closes a reload can mend; after the others (a revoked or expired link) it would only fail again. */
const mendedByReload = new Set<number>([CloseCode.ProtocolVersion, CloseCode.DocumentTooLarge, CloseCode.MalformedFrame]);

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
        {mendedByReload.has(status.code) && (
          <button type="button" className="button" onClick={() => window.location.reload()}>
            Reload
          </button>
        )}
        <a className="button" href="/">
          New workspace
        </a>
      </span>
    </div>
  );
}
