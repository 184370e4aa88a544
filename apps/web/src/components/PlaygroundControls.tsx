import { useEffect, useRef, useState } from 'react';
import { fetchPlayground, resetPlayground, startPlayground, type PlaygroundInfo } from '../api/playgroundApi';
import { linkCredentials, useConnection } from '../stores/connectionStore';
import { usePresence } from '../stores/presenceStore';
import { showNotice } from '../stores/workspaceStore';

export function usePlaygroundInfo(): PlaygroundInfo | null | undefined {
  const [info, setInfo] = useState<PlaygroundInfo | null | undefined>(undefined);
  useEffect(() => {
    let live = true;
    void fetchPlayground().then((value) => live && setInfo(value));
    return () => {
      live = false;
    };
  }, []);
  return info;
}

/**
 * The playground's front door: makes this visitor's workspace and goes there. A refusal (the
 * playground is full, or this address made its share this hour) says when to come back.
 */
export function PlaygroundStart({ info }: { info: PlaygroundInfo }) {
  const [error, setError] = useState<string | null>(null);
  const started = useRef(false);
  const start = async () => {
    setError(null);
    const result = await startPlayground();
    if (!result.ok) {
      setError(result.message);
      return;
    }
    const link = new URL(result.value.url, window.location.href);
    window.location.assign(link.pathname + link.hash);
  };
  useEffect(() => {
    if (started.current) return;
    started.current = true;
    void start();
  }, []);
  return (
    <div className="landing" data-testid="playground-start">
      <div className="landing-card">
        <h1>
          <span className="brand-mark">◆</span> Flint playground
        </h1>
        {error ? (
          <>
            <p className="form-error" role="alert" data-testid="playground-error">
              {error}
            </p>
            <button type="button" className="button button--primary" onClick={() => void start()}>
              Try again
            </button>
          </>
        ) : (
          <p className="landing-lead">Making your copy of {info.name}…</p>
        )}
        <p className="muted landing-foot">
          Your workspace is yours: share it with the Share button. It is deleted after {info.idleMinutes} minutes with no tab open.
        </p>
      </div>
    </div>
  );
}

/** The owner's "Reset" in a playground workspace: back to the template, in place (links keep working). Two clicks. */
export function PlaygroundReset() {
  const info = usePlaygroundInfo();
  const owner = useConnection((s) => s.role === 'owner' && s.status.kind !== 'closed');
  const [armed, setArmed] = useState(false);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (!armed) return;
    const timer = setTimeout(() => setArmed(false), 4000);
    return () => clearTimeout(timer);
  }, [armed]);
  if (!info || !owner) return null;
  const reset = async () => {
    const credentials = linkCredentials();
    if (!credentials) return;
    setBusy(true);
    const result = await resetPlayground(credentials.workspaceId, credentials.token, usePresence.getState().self.name);
    setBusy(false);
    setArmed(false);
    if (result.ok) showNotice(`Reset to ${info.name}.`, 'info');
    else showNotice(result.message);
  };
  return (
    <button
      type="button"
      className={`button${armed ? ' button--danger' : ''}`}
      data-testid="playground-reset"
      disabled={busy}
      title="Put every file back as the template has it, for everyone here"
      onClick={() => (armed ? void reset() : setArmed(true))}
    >
      {armed ? 'Click again to reset' : 'Reset'}
    </button>
  );
}
