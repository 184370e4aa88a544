import { useState } from 'react';
import type { ConnectionKind } from '../api/modelConnectApi';
import { selectCanEdit, useConnection } from '../stores/connectionStore';
import { chooseBundledModel, connectWorkspaceModel, disconnectWorkspaceModel, playDemoTurn, useModelConnection } from '../stores/modelConnectionStore';
import { DEMO_MODEL } from '../stores/threadStore';
import { useWorkspace } from '../stores/workspaceStore';
import { Icon } from './Icon';

/** A file the demo's scripted turn edits: the replay is offered where the demo project is. */
const demoFile = 'src/model/task.ts';

const kinds: Array<{ kind: ConnectionKind; label: string; url: string; urlHint: string; modelHint: string; needsKey: boolean }> = [
  { kind: 'openai', label: 'OpenAI-compatible', url: '', urlHint: 'https://api.openai.com/v1', modelHint: 'gpt-5.3-codex-spark', needsKey: true },
  { kind: 'ollama', label: 'Ollama', url: 'http://127.0.0.1:11434', urlHint: 'http://127.0.0.1:11434', modelHint: 'qwen2.5-coder:7b', needsKey: false },
  { kind: 'llamacpp', label: 'llama.cpp server', url: 'http://127.0.0.1:8080', urlHint: 'http://127.0.0.1:8080', modelHint: 'any (llama-server serves one)', needsKey: false },
];

/**
 * The agent panel before any real model (issue 37): connect one (the owner), or watch the demo's
 * scripted turn replayed, or pick the bundled model knowing what it is. `compact`: under a thread
 * that already has turns (a replay played).
 */
export function FirstMinute({ compact = false }: { compact?: boolean }) {
  const canConnect = useModelConnection((s) => s.canConnect);
  const canEdit = useConnection(selectCanEdit);
  const hasDemo = useWorkspace((s) => [...s.pathById.values()].includes(demoFile));
  const [formOpen, setFormOpen] = useState(!compact);
  const [replayError, setReplayError] = useState<string | null>(null);
  const [starting, setStarting] = useState(false);

  const replay = async () => {
    setStarting(true);
    setReplayError(null);
    setReplayError(await playDemoTurn());
    setStarting(false);
  };

  return (
    <div className={`first-minute${compact ? ' first-minute--compact' : ''}`} data-testid="first-minute">
      {!compact && (
        <>
          <p className="thread-empty-title">
            <Icon name="spark" className="agent-panel-mark" /> Connect a model to use the agent
          </p>
          <p className="muted">
            This gateway has no model configured beyond the bundled <span className="thread-nowrap">{DEMO_MODEL}</span>, a tiny code completer that
            cannot follow instructions.{' '}
            {canConnect ? 'Connect one for this workspace:' : "The workspace's owner can connect one from this panel."}
          </p>
        </>
      )}
      {canConnect && (formOpen ? <ConnectForm onCancel={compact ? () => setFormOpen(false) : undefined} /> : null)}
      <div className="first-minute-actions">
        {compact && canConnect && !formOpen && (
          <button type="button" className="button button--primary" data-testid="connect-model-open" onClick={() => setFormOpen(true)}>
            Connect a model…
          </button>
        )}
        {canEdit && hasDemo && (
          <button type="button" className="button" data-testid="play-demo-replay" disabled={starting} onClick={() => void replay()}>
            <Icon name="spark" /> {compact ? 'Replay again' : 'Watch a replay of a scripted turn'}
          </button>
        )}
        <button type="button" className="link-button muted" data-testid="use-bundled-model" onClick={() => chooseBundledModel(true)}>
          Use the bundled model anyway
        </button>
      </div>
      {replayError && (
        <p className="form-error" role="alert">
          {replayError}
        </p>
      )}
      {!compact && canEdit && hasDemo && (
        <p className="muted first-minute-foot">
          The replay is a recorded agent turn on this demo project, not a live model: it streams into the files for everyone here, and you review it like any turn.
        </p>
      )}
    </div>
  );
}

/** The owner's one step: where the model is, its key, its name; checked by the gateway before it is kept. */
export function ConnectForm({ onCancel, onDone }: { onCancel?: () => void; onDone?: () => void }) {
  const [kind, setKind] = useState<ConnectionKind>('openai');
  const preset = kinds.find((k) => k.kind === kind)!;
  const [baseUrl, setBaseUrl] = useState('');
  const [apiKey, setApiKey] = useState('');
  const [model, setModel] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const submit = async () => {
    setBusy(true);
    setError(null);
    const failure = await connectWorkspaceModel({ kind, baseUrl: baseUrl.trim() || undefined, apiKey: apiKey.trim() || undefined, model });
    setBusy(false);
    if (failure) setError(failure);
    else onDone?.();
  };

  return (
    <form
      className="connect-form"
      data-testid="connect-model-form"
      onSubmit={(event) => {
        event.preventDefault();
        void submit();
      }}
    >
      <div className="connect-kinds" role="radiogroup" aria-label="Provider">
        {kinds.map((k) => (
          <button
            key={k.kind}
            type="button"
            role="radio"
            aria-checked={kind === k.kind}
            className={`connect-kind${kind === k.kind ? ' connect-kind--on' : ''}`}
            data-testid={`connect-kind-${k.kind}`}
            onClick={() => {
              setKind(k.kind);
              setBaseUrl(k.url);
            }}
          >
            {k.label}
          </button>
        ))}
      </div>
      <label>
        <span>Base URL</span>
        <input data-testid="connect-base-url" value={baseUrl} placeholder={preset.urlHint} onChange={(e) => setBaseUrl(e.target.value)} spellCheck={false} />
      </label>
      <label>
        <span>API key{preset.needsKey ? '' : ' (optional)'}</span>
        <input data-testid="connect-api-key" type="password" autoComplete="off" value={apiKey} placeholder={preset.needsKey ? 'sk-…' : 'none'} onChange={(e) => setApiKey(e.target.value)} />
      </label>
      <label>
        <span>Model</span>
        <input data-testid="connect-model-name" value={model} placeholder={preset.modelHint} onChange={(e) => setModel(e.target.value)} spellCheck={false} required />
      </label>
      <div className="connect-form-actions">
        <button type="submit" className="button button--primary" data-testid="connect-model-submit" disabled={busy || !model.trim()}>
          {busy ? 'Checking…' : 'Connect'}
        </button>
        {onCancel && (
          <button type="button" className="button" onClick={onCancel}>
            Cancel
          </button>
        )}
        <span className="muted connect-form-note">Checked with one request. The key stays on the gateway; others here see only the model's name.</span>
      </div>
      {error && (
        <p className="form-error" role="alert" data-testid="connect-model-error">
          {error}
        </p>
      )}
    </form>
  );
}

/** The header's word on a connected model; the owner can see the masked key, change or disconnect it. */
export function ConnectedModel() {
  const connection = useModelConnection((s) => s.connection);
  const canConnect = useModelConnection((s) => s.canConnect);
  const [open, setOpen] = useState(false);
  const [editing, setEditing] = useState(false);
  const [error, setError] = useState<string | null>(null);
  if (!connection) return null;
  return (
    <div className="connected-model" data-testid="connected-model">
      <div className="connected-model-line">
        <span className="muted">Connected to</span> <strong data-testid="connected-model-name">{connection.model}</strong>
        {canConnect && (
          <button type="button" className="link-button" data-testid="connected-model-manage" onClick={() => setOpen(!open)}>
            {open ? 'Close' : 'Manage'}
          </button>
        )}
      </div>
      {open && canConnect && !editing && (
        <div className="connected-model-details">
          <span className="muted">{connection.baseUrl}</span>
          <span className="muted">
            key <code data-testid="connected-model-key">{connection.maskedKey ?? 'none'}</code>
          </span>
          <span className="connected-model-buttons">
            <button type="button" className="button" onClick={() => setEditing(true)}>
              Change…
            </button>
            <button
              type="button"
              className="button button--danger"
              data-testid="connected-model-disconnect"
              onClick={() => void disconnectWorkspaceModel().then((failure) => (failure ? setError(failure) : setOpen(false)))}
            >
              Disconnect
            </button>
          </span>
        </div>
      )}
      {open && editing && (
        <ConnectForm
          onCancel={() => setEditing(false)}
          onDone={() => {
            setEditing(false);
            setOpen(false);
          }}
        />
      )}
      {error && (
        <p className="form-error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

/** Where someone who picked the bundled model gets the first-minute choices back. */
export function BundledChosenNote() {
  const chosen = useModelConnection((s) => s.bundledChosen && s.connection === null);
  if (!chosen) return null;
  return (
    <button type="button" className="link-button" data-testid="first-minute-back" onClick={() => chooseBundledModel(false)}>
      Connect a model or watch the replay instead
    </button>
  );
}
