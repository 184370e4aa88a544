import { useState } from 'react';
import { createReplay } from '../api/replayApi';
import { createWorkspace } from '../api/workspaceApi';
import { recentWorkspaces } from '../memory/recentWorkspaces';
import { PlaygroundStart, usePlaygroundInfo } from './PlaygroundControls';
import { roleLabel } from './RoleBadge';

/**
 * The front door. On a playground: this visitor's own workspace, made at once. Otherwise: a new
 * workspace, the demo, or one this browser opened before.
 */
export function Landing() {
  const playground = usePlaygroundInfo();
  // Blank while asking (a few ms on loopback): no front page flashes before a playground's redirect.
  if (playground === undefined) return <div className="landing" />;
  if (playground) return <PlaygroundStart info={playground} />;
  return <FrontPage />;
}

function FrontPage() {
  const [name, setName] = useState('');
  const [busy, setBusy] = useState<'new' | 'demo' | 'replay' | null>(null);
  const [error, setError] = useState<string | null>(null);

  const create = async (kind: 'new' | 'demo') => {
    setBusy(kind);
    setError(null);
    const typed = name.trim();
    const result = await createWorkspace(kind === 'demo' ? { name: typed || 'Tally (demo)', seed: 'demo' } : typed ? { name: typed } : {});
    if (!result.ok) {
      setBusy(null);
      setError(result.message);
      return;
    }
    // Stay on this origin whatever the gateway thinks its public address is.
    const link = new URL(result.value.url, window.location.href);
    window.location.assign(link.pathname + link.hash);
  };

  // A recording (`.flintrec`) becomes a read-only workspace replaying it; this tab presents it.
  const replay = async (file: File) => {
    setBusy('replay');
    setError(null);
    const result = await createReplay(await file.text());
    if (!result.ok) {
      setBusy(null);
      setError(result.message);
      return;
    }
    const { workspaceId, viewerToken, controlToken } = result.value;
    window.location.assign(`/w/${encodeURIComponent(workspaceId)}#token=${encodeURIComponent(viewerToken)}&control=${encodeURIComponent(controlToken)}`);
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
            void create('new');
          }}
        >
          <input
            data-testid="workspace-name-input"
            placeholder="Workspace name (optional)"
            value={name}
            maxLength={100}
            onChange={(event) => setName(event.target.value)}
          />
          <div className="landing-actions">
            <button type="submit" className="button button--primary button--large" data-testid="new-workspace-button" disabled={busy !== null}>
              {busy === 'new' ? 'Creating…' : 'New workspace'}
            </button>
            <button type="button" className="button button--large" data-testid="open-demo-button" disabled={busy !== null} onClick={() => void create('demo')}>
              {busy === 'demo' ? 'Opening…' : 'Open the demo'}
            </button>
            <label className={`button button--large${busy !== null ? ' button--disabled' : ''}`} title="Play a recording (.flintrec) into a new read-only workspace that you present">
              {busy === 'replay' ? 'Loading…' : 'Replay a recording…'}
              <input
                type="file"
                accept=".flintrec,application/x-ndjson"
                hidden
                data-testid="replay-file-input"
                disabled={busy !== null}
                onChange={(event) => {
                  const file = event.target.files?.[0];
                  if (file) void replay(file);
                }}
              />
            </label>
          </div>
        </form>
        {error && (
          <p className="form-error" role="alert">
            {error}
          </p>
        )}
        <p className="muted landing-foot">
          The demo is a small TypeScript project with a scripted agent turn to replay. You get an owner link either way. Keep it:
          this browser remembers it, but anywhere else it is the only way back in, and it can create links for others.
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
