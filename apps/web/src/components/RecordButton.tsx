import { useEffect, useState } from 'react';
import { recordingStatus, startRecording, stopRecording } from '../api/recordingApi';
import { linkCredentials, useConnection } from '../stores/connectionStore';
import { showNotice } from '../stores/workspaceStore';

/**
 * The owner's recorder (issue 37): every change, the thread and the agent's tokens, with their
 * times, kept by the gateway until Stop, which downloads the `.flintrec` file. While it records,
 * the button asks every few seconds whether the gateway stopped it at its cap; then it says why,
 * and the button downloads what was kept.
 */
const statusPollMs = 5_000;

export function RecordButton() {
  const owner = useConnection((s) => s.role === 'owner' && s.status.kind !== 'closed');
  const [recording, setRecording] = useState(false);
  const [busy, setBusy] = useState(false);
  const [full, setFull] = useState(false);
  useEffect(() => {
    if (!recording || full) return;
    const timer = setInterval(() => {
      const credentials = linkCredentials();
      if (!credentials) return;
      void recordingStatus(credentials.workspaceId, credentials.token).then((status) => {
        if (!status.ok || status.value.recording || !status.value.stoppedBecause) return;
        setFull(true);
        showNotice(status.value.stoppedBecause);
      });
    }, statusPollMs);
    return () => clearInterval(timer);
  }, [recording, full]);
  if (!owner) return null;
  const toggle = async () => {
    const credentials = linkCredentials();
    if (!credentials) return;
    setBusy(true);
    if (!recording) {
      const started = await startRecording(credentials.workspaceId, credentials.token);
      setBusy(false);
      if (started.ok) setRecording(true);
      else showNotice(started.message);
      return;
    }
    const stopped = await stopRecording(credentials.workspaceId, credentials.token);
    setBusy(false);
    setRecording(false);
    setFull(false);
    if (!stopped.ok) return showNotice(stopped.message);
    const url = URL.createObjectURL(stopped.value);
    const link = document.createElement('a');
    link.href = url;
    link.download = `flint-${credentials.workspaceId}.flintrec`;
    link.click();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  };
  return (
    <button
      type="button"
      className={`button${recording ? ' button--recording' : ''}`}
      data-testid="record-button"
      aria-pressed={recording}
      disabled={busy}
      title={full ? 'The recording reached its limit and stopped: download what it kept' : recording ? 'Stop recording and download it' : 'Record this workspace: every change to its files and its thread, and everyone’s cursor, with their times'}
      onClick={() => void toggle()}
    >
      <span className="record-dot" aria-hidden /> {full ? 'Download' : recording ? 'Stop' : 'Record'}
    </button>
  );
}
