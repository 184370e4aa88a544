import { selectCanEdit, useConnection } from '../stores/connectionStore';
import { setAutocompleteEnabled, useAutocomplete } from '../stores/autocompleteStore';

/** The status bar item of autocomplete: on/off (remembered), running, last keystroke-to-ghost latency. */
export function AutocompleteStatus() {
  const enabled = useAutocomplete((s) => s.enabled);
  const stats = useAutocomplete((s) => s.stats);
  const canEdit = useConnection(selectCanEdit);
  if (!canEdit) return null;
  const state = !enabled ? 'off' : stats?.problem ? 'unavailable' : stats?.running ? 'running' : 'idle';
  const detail = !enabled
    ? 'off'
    : stats?.problem
      ? 'unavailable'
      : stats?.running
        ? 'completing…'
        : stats?.lastLatencyMs != null
          ? `${Math.round(stats.lastLatencyMs)} ms`
          : 'on';
  const title = stats
    ? `Autocomplete${stats.model ? ` (${stats.model})` : ''}: ${stats.requested} requests, ${stats.shown} shown, ${stats.accepted} accepted, ${stats.dismissed} dismissed, ${stats.reused} keystrokes reused a suggestion.${stats.problem ? ` ${stats.problem}` : ''} Click to turn ${enabled ? 'off' : 'on'}.`
    : `Autocomplete is ${enabled ? 'on' : 'off'}. Click to turn it ${enabled ? 'off' : 'on'}.`;
  return (
    <span className={`status-item status-autocomplete status-autocomplete--${state}`} data-testid="autocomplete-status" data-state={state} title={title}>
      <button type="button" className="status-autocomplete-toggle" data-testid="autocomplete-toggle" aria-pressed={enabled} onClick={() => setAutocompleteEnabled(!enabled)}>
        ⇥ Complete
      </button>
      <span className="status-autocomplete-detail">{detail}</span>
    </span>
  );
}
