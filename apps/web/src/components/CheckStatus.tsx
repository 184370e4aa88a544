import { runCheck, selectMayType, useTerminals } from '../stores/terminalStore';

/** The Check button in the status bar: the project's check command, and how it last went. */
export function CheckStatus() {
  const check = useTerminals((s) => s.room?.check ?? null);
  const enabled = useTerminals((s) => s.room?.availability.enabled ?? false);
  const command = useTerminals((s) => s.room?.settings.checkCommand ?? '');
  // The check runs project code: only the owner and those the owner lets type run it ([P47]).
  const canRun = useTerminals(selectMayType);
  if (!enabled || (!command && !check)) return null;
  const label = !check ? 'Check' : check.status === 'running' ? 'Checking…' : check.status === 'passed' ? '✓ Check passed' : `✗ Check failed${check.exitCode !== null ? ` (exit ${check.exitCode})` : ''}`;
  const why = canRun ? '' : ' Only the owner and people the owner lets type run the check.';
  const title = check ? `${check.command} — run by ${check.by}.${canRun ? ' Click to run it again; the output is in its terminal tab.' : why}` : canRun ? `Run ${command}` : `${command}.${why}`;
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
