import { useConnection } from '../stores/connectionStore';
import { runCheck, useTerminals } from '../stores/terminalStore';

/** The Check button in the status bar: the project's check command, and how it last went. */
export function CheckStatus() {
  const check = useTerminals((s) => s.room?.check ?? null);
  const enabled = useTerminals((s) => s.room?.availability.enabled ?? false);
  const command = useTerminals((s) => s.room?.settings.checkCommand ?? '');
  const canRun = useConnection((s) => s.role === 'owner' || s.role === 'editor');
  if (!enabled || (!command && !check)) return null;
  const label = !check ? 'Check' : check.status === 'running' ? 'Checking…' : check.status === 'passed' ? '✓ Check passed' : `✗ Check failed${check.exitCode !== null ? ` (exit ${check.exitCode})` : ''}`;
  const title = check ? `${check.command} — run by ${check.by}. Click to run it again; the output is in its terminal tab.` : `Run ${command}`;
  return (
    <button
      type="button"
      className={`status-item status-check${check ? ` status-check--${check.status}` : ''}`}
      data-testid="status-check"
      title={title}
      disabled={!canRun || check?.status === 'running'}
      onClick={() => void runCheck()}
    >
      {label}
    </button>
  );
}
