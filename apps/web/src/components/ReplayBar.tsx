import { useEffect, useState } from 'react';
import { controlReplay, replayState, type ReplayAction, type ReplayState } from '../api/replayApi';
import { linkCredentials, useConnection } from '../stores/connectionStore';
import { showNotice } from '../stores/workspaceStore';

const speeds = [1, 2, 10] as const;

/** The presenter's control secret, from the address's fragment (`#token=…&control=…`); null for viewers. */
function controlToken(): string | null {
  return new URLSearchParams(window.location.hash.replace(/^#/, '')).get('control');
}

function clock(ms: number): string {
  const s = Math.floor(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/**
 * A replay workspace's playback (issue 37): where the replay is, for everyone, and for the
 * presenter (who holds the control secret) play/pause, 1×/2×/10× and a timeline to scrub. The
 * gateway plays the documents; every tab sees the same moment, this bar only shows and asks.
 * Not shown in a workspace that is no replay.
 */
export function ReplayBar() {
  const open = useConnection((s) => s.status.kind === 'open');
  const [state, setState] = useState<ReplayState | null>(null);
  const [scrub, setScrub] = useState<number | null>(null);
  const [control] = useState(controlToken);
  useEffect(() => {
    if (!open) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let isReplay = false;
    const poll = async () => {
      const credentials = linkCredentials();
      if (!credentials || stopped) return;
      const result = await replayState(credentials.workspaceId, credentials.token);
      if (stopped) return;
      // The first answer says whether this is a replay (no: nothing to show, no more asking); a
      // later failure (the gateway restarting, a slow network) keeps the bar and asks again.
      if (!result.ok && !isReplay) return setState(null);
      if (result.ok) {
        isReplay = true;
        setState(result.value);
      }
      timer = setTimeout(() => void poll(), result.ok && result.value.playing ? 250 : 500);
    };
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [open]);
  if (!state) return null;

  const act = async (action: ReplayAction) => {
    const credentials = linkCredentials();
    if (!credentials || !control) return;
    const result = await controlReplay(credentials.workspaceId, control, action);
    if (result.ok) setState(result.value);
    else showNotice(result.message);
  };
  const at = scrub ?? state.atMs;
  const copyViewerLink = () => {
    const credentials = linkCredentials();
    if (!credentials) return;
    const link = `${window.location.origin}/w/${credentials.workspaceId}#token=${credentials.token}`;
    void navigator.clipboard?.writeText(link).then(
      () => showNotice('Viewer link copied: everyone who opens it follows this replay.'),
      () => showNotice(link),
    );
  };
  return (
    <div className="replay-bar" data-testid="replay-bar" data-playing={state.playing ? 'true' : 'false'} data-at={Math.round(state.atMs)} role="toolbar" aria-label="Replay">
      <span className="replay-badge" title="A replay of a recording: nobody can edit here">Replay</span>
      {control ? (
        <>
          <button type="button" className="button replay-play" data-testid="replay-play" title={state.playing ? 'Pause' : 'Play'} onClick={() => void act({ action: state.playing ? 'pause' : 'play' })}>
            {state.playing ? '❚❚ Pause' : '▶ Play'}
          </button>
          <div className="replay-speeds" role="radiogroup" aria-label="Speed">
            {speeds.map((speed) => (
              <button key={speed} type="button" role="radio" aria-checked={state.speed === speed} className={`replay-speed${state.speed === speed ? ' replay-speed--on' : ''}`} data-testid={`replay-speed-${speed}`} onClick={() => void act({ action: 'speed', speed })}>
                {speed}×
              </button>
            ))}
          </div>
        </>
      ) : (
        <span className="muted replay-status" data-testid="replay-status">
          {state.playing ? `Playing at ${state.speed}×` : 'Paused'} by the presenter
        </span>
      )}
      <span className="replay-time" data-testid="replay-time">{clock(at)}</span>
      <input
        type="range"
        className="replay-timeline"
        data-testid="replay-timeline"
        aria-label="Timeline"
        min={0}
        max={Math.max(1, state.durationMs)}
        step={10}
        value={at}
        disabled={!control}
        onChange={(event) => setScrub(Number(event.target.value))}
        onPointerUp={() => scrub !== null && void act({ action: 'seek', atMs: scrub }).then(() => setScrub(null))}
        onKeyUp={() => scrub !== null && void act({ action: 'seek', atMs: scrub }).then(() => setScrub(null))}
      />
      <span className="replay-time muted">{clock(state.durationMs)}</span>
      <span className="replay-title muted" title={state.title}>
        {state.title}
      </span>
      {control && (
        <button type="button" className="button" data-testid="replay-copy-viewer-link" title="Copy the link for viewers: they watch, nobody edits" onClick={copyViewerLink}>
          Copy viewer link
        </button>
      )}
    </div>
  );
}
