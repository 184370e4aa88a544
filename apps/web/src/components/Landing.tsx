import { useState } from 'react';
import { createWorkspace } from '../api/workspaceApi';

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
        <p className="muted landing-foot">You get an owner link. Keep it: it is the only way back in, and it can create links for others.</p>
      </div>
    </div>
  );
}

/** Shown for addresses that are not a workspace link, or a link missing its token. */
export function LinkProblem({ title, detail }: { title: string; detail: string }) {
  return (
    <div className="landing">
      <div className="landing-card">
        <h1>{title}</h1>
        <p className="landing-lead">{detail}</p>
        <a className="button button--primary" href="/">
          Go to Flint home
        </a>
      </div>
    </div>
  );
}
