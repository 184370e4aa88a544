import type { TurnInfo } from '@flint/protocol';
import { selectHudTurn, useAgent } from '../stores/agentStore';
import { useWorkspace } from '../stores/workspaceStore';

const statusText: Record<TurnInfo['status'], string> = {
  streaming: 'streaming',
  done: 'done',
  cancelled: 'stopped',
  failed: 'failed',
};

const number = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/**
 * The latency HUD in the status bar: which model served the active file's current (or last)
 * turn, its time to first token, throughput and output. Every session in the room sees it;
 * it re-renders at most once per frame (the store batches turn updates).
 */
export function AgentHud() {
  const activeFileId = useWorkspace((s) => s.activeFileId);
  const turn = useAgent((s) => selectHudTurn(s, activeFileId));
  if (!turn) return null;
  const tps = turn.tokensPerSecond;
  return (
    <span
      className={`status-item agent-hud agent-hud--${turn.status}`}
      data-testid="agent-hud"
      title={`${turn.by} asked: ${turn.instruction}`}
    >
      <span className="hud-status" data-testid="hud-status">
        <span className="hud-dot" />
        {statusText[turn.status]}
      </span>
      <span className="hud-model" data-testid="hud-model">
        ✦ {turn.model} · {turn.route}
      </span>
      <span className="hud-metric" data-testid="hud-ttft" title="Time to first token">
        <span className="hud-label">TTFT</span> {turn.ttftMs === null ? '—' : `${number.format(turn.ttftMs)} ms`}
      </span>
      <span className="hud-metric hud-tps" data-testid="hud-tps" title="Output tokens per second">
        {tps === null ? '—' : number.format(tps)} <span className="hud-label">tok/s</span>
      </span>
      <span className="hud-metric" data-testid="hud-tokens" title="Output tokens">
        {number.format(turn.outputTokens)} <span className="hud-label">tok</span>
      </span>
      {turn.note !== null && (
        <span className="hud-note" data-testid="hud-note" title={turn.note}>
          context trimmed
        </span>
      )}
    </span>
  );
}
