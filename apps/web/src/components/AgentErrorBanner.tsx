import { describeTurnError } from '../stores/agentMessages';
import { dismissTurnError, selectErrorTurn, useAgent } from '../stores/agentStore';
import { Icon } from './Icon';

/**
 * Why the agent's last turn failed, in a sentence that says what to do. Shown to everyone in
 * the room until dismissed or until someone tries again in that file.
 */
export function AgentErrorBanner() {
  const turn = useAgent(selectErrorTurn);
  if (!turn?.error) return null;
  const { title, detail } = describeTurnError(turn.error);
  return (
    <div className="agent-error" data-testid="agent-error" role="alert">
      <span className="agent-error-mark">✦</span>
      <span className="agent-error-text">
        <strong>{title}</strong> {detail}
      </span>
      <span className="agent-error-meta">
        {turn.model} · {turn.route}
      </span>
      <button type="button" className="icon-button" aria-label="Dismiss" title="Dismiss" onClick={() => dismissTurnError(turn.turnId)}>
        <Icon name="close" />
      </button>
    </div>
  );
}
