import { useEffect, useRef, useState } from 'react';
import type { LinkInfo } from '../api/workspaceApi';
import { useConnection } from '../stores/connectionStore';
import { closeShareDialog, revoke, shareLink, useShare } from '../stores/shareStore';
import { Icon } from './Icon';
import { roleLabel } from './RoleBadge';

const hourMs = 3_600_000;
const expiries = [
  { value: 'never', label: 'Never expires', ms: null },
  { value: '1h', label: 'Expires in 1 hour', ms: hourMs },
  { value: '24h', label: 'Expires in 24 hours', ms: 24 * hourMs },
  { value: '7d', label: 'Expires in 7 days', ms: 7 * 24 * hourMs },
] as const;

function describeExpiry(expiresAt: number | null, now: number): string {
  if (expiresAt === null) return 'never expires';
  const leftMs = expiresAt - now;
  if (leftMs <= 0) return 'expired';
  if (leftMs < hourMs) return `expires in ${Math.max(1, Math.round(leftMs / 60_000))} min`;
  if (leftMs < 48 * hourMs) return `expires in ${Math.round(leftMs / hourMs)} h`;
  return `expires in ${Math.round(leftMs / (24 * hourMs))} days`;
}

async function copyText(text: string, fallback: HTMLInputElement | null): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // The Clipboard API needs a secure context; plain-http deployments fall back to selection.
    fallback?.select();
    return document.execCommand('copy');
  }
}

/** The owner's: create links with a role and an expiry, copy them, and revoke live ones. */
export function ShareDialog() {
  const open = useShare((s) => s.open);
  const role = useConnection((s) => s.role);
  if (!open || role !== 'owner') return null;
  return <ShareDialogBody />;
}

type ShareRole = 'owner' | 'editor' | 'viewer';

function ShareDialogBody() {
  const links = useShare((s) => s.links);
  const loading = useShare((s) => s.loading);
  const creating = useShare((s) => s.creating);
  const created = useShare((s) => s.created);
  const error = useShare((s) => s.error);
  const [role, setRole] = useState<ShareRole>('editor');
  const [expiry, setExpiry] = useState<(typeof expiries)[number]['value']>('never');
  const [label, setLabel] = useState('');
  const [copied, setCopied] = useState(false);
  const urlInput = useRef<HTMLInputElement>(null);
  const firstField = useRef<HTMLSelectElement>(null);
  const now = Date.now();

  useEffect(() => firstField.current?.focus(), []);
  useEffect(() => {
    setCopied(false);
    urlInput.current?.focus(); // selects it (onFocus): the link is what the user came for
  }, [created]);
  useEffect(() => {
    // On window: the create button loses focus while it is disabled, so focus may be on <body>.
    const onKeyDown = (event: KeyboardEvent) => event.key === 'Escape' && closeShareDialog();
    window.addEventListener('keydown', onKeyDown);
    return () => window.removeEventListener('keydown', onKeyDown);
  }, []);

  const create = () => {
    const ms = expiries.find((e) => e.value === expiry)?.ms ?? null;
    void shareLink(role, ms, label).then((made) => made && setLabel(''));
  };
  const ownerLinks = links.filter((link) => link.role === 'owner').length;

  return (
    <div className="modal-backdrop" onMouseDown={(event) => event.target === event.currentTarget && closeShareDialog()}>
      <div
        className="modal"
        role="dialog"
        aria-modal="true"
        aria-labelledby="share-title"
        data-testid="share-dialog"
      >
        <header className="modal-header">
          <h2 id="share-title">Share workspace</h2>
          <button type="button" className="icon-button" aria-label="Close" onClick={closeShareDialog}>
            <Icon name="close" />
          </button>
        </header>
        <p className="muted modal-lead" data-testid="share-lead">
          Anyone with a link joins with its role: editors edit, viewers watch, owners also share. Revoke a link to disconnect
          them. A new link is shown only once, right after you create it: copy it then.
        </p>
        <div className="share-form">
          <select ref={firstField} data-testid="share-role" aria-label="Role" value={role} onChange={(e) => setRole(e.target.value as ShareRole)}>
            <option value="editor">Editor</option>
            <option value="viewer">Viewer</option>
            <option value="owner">Owner</option>
          </select>
          <select data-testid="share-expiry" aria-label="Expiry" value={expiry} onChange={(e) => setExpiry(e.target.value as typeof expiry)}>
            {expiries.map((e) => (
              <option key={e.value} value={e.value}>
                {e.label}
              </option>
            ))}
          </select>
          <input
            data-testid="share-label"
            aria-label="Label"
            placeholder="Label (optional)"
            value={label}
            maxLength={100}
            onChange={(e) => setLabel(e.target.value)}
            onKeyDown={(e) => e.key === 'Enter' && create()}
          />
          <button type="button" className="button button--primary" data-testid="share-create" disabled={creating} onClick={create}>
            {creating ? 'Creating…' : 'Create link'}
          </button>
        </div>
        {created && (
          <div className="share-created">
            <label className="muted" htmlFor="share-url">
              New {roleLabel(created.link.role).toLowerCase()} link — copy it now, it is shown only once:
            </label>
            <div className="share-url-row">
              <input id="share-url" ref={urlInput} data-testid="share-url" readOnly value={created.url} onFocus={(e) => e.target.select()} />
              <button
                type="button"
                className="button"
                data-testid="share-copy"
                onClick={() => void copyText(created.url, urlInput.current).then(setCopied)}
              >
                <Icon name="copy" /> {copied ? 'Copied' : 'Copy'}
              </button>
            </div>
          </div>
        )}
        {error && (
          <p className="form-error" role="alert">
            {error}
          </p>
        )}
        <h3 className="modal-section">Live links</h3>
        <ul className="link-list">
          {links.map((link) => (
            <LinkRow key={link.id} link={link} now={now} lastOwner={link.role === 'owner' && ownerLinks === 1} />
          ))}
          {!loading && links.length === 0 && <li className="muted">No live links.</li>}
        </ul>
      </div>
    </div>
  );
}

/** Revoking disconnects people at once, so it asks first; the last owner link cannot go (the gateway refuses too). */
function LinkRow({ link, now, lastOwner }: { link: LinkInfo; now: number; lastOwner: boolean }) {
  const [busy, setBusy] = useState(false);
  const confirmRevoke = () =>
    window.confirm(
      `Revoke the ${roleLabel(link.role).toLowerCase()} link “${link.label}”? Everyone who joined with it is disconnected at once, and the link stops working for good.`,
    );
  return (
    <li className="link-row" data-testid="link-row" data-role={link.role} data-link-id={link.id}>
      <span className={`role-badge role-badge--${link.role}`}>{roleLabel(link.role)}</span>
      <span className="link-label" title={link.label}>
        {link.label}
      </span>
      <span className="link-meta muted">{describeExpiry(link.expiresAt, now)}</span>
      <button
        type="button"
        className="button button--danger"
        data-testid="revoke-link"
        disabled={busy || lastOwner}
        title={lastOwner ? 'The last owner link cannot be revoked: create another owner link first.' : undefined}
        onClick={() => {
          if (!confirmRevoke()) return;
          setBusy(true);
          void revoke(link.id).finally(() => setBusy(false));
        }}
      >
        Revoke
      </button>
    </li>
  );
}
