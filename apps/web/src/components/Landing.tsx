import { useState } from 'react';
import { createWorkspace } from '../api/workspaceApi';
import { recentWorkspaces } from '../memory/recentWorkspaces';
import { roleLabel } from './RoleBadge';

/** The front door: make a workspace and land in it as its owner. */
export function Landing() {
  const [name, setName] = useState('');
  const [demo, setDemo] = useState(true);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const create = async () => {
    setBusy(true);
    setError(null);
    const result = await createWorkspace({ ...(name.trim() ? { name: name.trim() } : {}), ...(demo ? { seed: 'demo' as const } : {}) });
    if (!result.ok) {
      setBusy(false);
      setError(result.message);
      return;
    }
    // Stay on this origin whatever the gateway thinks its public address is.
    const link = new URL(result.value.url, window.location.href);
    window.location.assign(link.pathname + link.hash);
  };

  return (
    <div className="landing">
      <div className="landing-card">
        <h1>
          <span className="brand-mark">◆</span> Flint
        </h1>
        <p className="landing-lead">A collaborative code editor. Share a link, and everyone on it edits the same files live.</p>
        <form
          className="landing-form"
          onSubmit={(event) => {
            event.preventDefault();
            void create();
          }}
        >
          <input
            data-testid="workspace-name-input"
            placeholder="Workspace name (optional)"
            value={name}
            maxLength={100}
            onChange={(event) => setName(event.target.value)}
          />
          <label className="checkbox">
            <input type="checkbox" checked={demo} onChange={(event) => setDemo(event.target.checked)} /> Start from the demo project
          </label>
          <button type="submit" className="button button--primary button--large" data-testid="new-workspace-button" disabled={busy}>
            {busy ? 'Creating…' : 'New workspace'}
          </button>
        </form>
        {error && (
          <p className="form-error" role="alert">
            {error}
          </p>
        )}
        <p className="muted landing-foot">
          You get an owner link. Keep it: this browser remembers it, but anywhere else it is the only way back in, and it can
          create links for others.
        </p>
        <RecentWorkspaces />
      </div>
    </div>
  );
}

/**
 * Shown for addresses that are not a workspace link, a link missing its token, or one the
 * gateway refused. `reload` only where reloading can help (a page older than the gateway).
 */
export function LinkProblem({ title, detail, reload = false }: { title: string; detail: string; reload?: boolean }) {
  return (
    <div className="landing" data-testid="link-problem">
      <div className="landing-card" role="alert">
        <h1>{title}</h1>
        <p className="landing-lead">{detail}</p>
        <div className="landing-actions">
          {reload && (
            <button type="button" className="button button--primary" onClick={() => window.location.reload()}>
              Reload
            </button>
          )}
          <a className={`button${reload ? '' : ' button--primary'}`} href="/">
            Go to Flint home
          </a>
        </div>
        <RecentWorkspaces />
      </div>
    </div>
  );
}

/** The workspaces this browser opened before (localStorage), newest first: a way back without the link. */
function RecentWorkspaces() {
  const recent = recentWorkspaces().slice(0, 8);
  if (recent.length === 0) return null;
  return (
    <nav className="recent-workspaces" aria-label="Recent workspaces" data-testid="recent-workspaces">
      <h2 className="muted">Opened in this browser</h2>
      <ul>
        {recent.map((w) => (
          <li key={w.id}>
            <a href={`/w/${w.id}`} data-testid="recent-workspace">
              {w.name}
            </a>{' '}
            <span className={`role-badge role-badge--${w.role}`}>{roleLabel(w.role)}</span>{' '}
            <span className="muted">{new Date(w.lastOpenedAt).toLocaleString()}</span>
          </li>
        ))}
      </ul>
    </nav>
  );
}
