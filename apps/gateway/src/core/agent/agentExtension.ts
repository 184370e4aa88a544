import { canWrite, CloseCode, type ThreadTurnRecord } from '@flint/protocol';
import type { Extension, ExtensionFactory, ExtensionHost, ExtensionSession } from '../Extension';
import { LocalLimits } from '../limits/LocalLimits';
import type { SharedLimits } from '../limits/SharedLimits';
import type { TerminalHost } from '../TerminalHost';
import { ThreadLog } from '../thread/ThreadLog';
import { ThreadService } from '../thread/ThreadService';
import { AgentService, type AgentResult } from './AgentService';
import { routeBreakerStates, type ModelRouter, type RoutedModel } from './ModelRouter';
import type { Gateway } from '../Gateway';
import type { Room } from '../Room';
import { cleanName } from '../peerPresence';

/**
 * The agent as two extensions of the kernel: inline turns (`agent.*`) and the thread
 * (`thread.*`). They share one `AgentService` per gateway (one admission: the link's rate and the
 * daily budgets count both), made with the first of them.
 */
/** `commands`: where the thread's `run_command` runs (the terminals; none: it is refused). */
export function agentExtensions(router: ModelRouter, limits?: SharedLimits, commands?: Pick<TerminalHost, 'runCommand'>): ExtensionFactory[] {
  const services = new WeakMap<ExtensionHost, AgentService>();
  const serviceOf = (host: ExtensionHost): AgentService => {
    let agent = services.get(host);
    if (!agent) {
      const { clock, random, config, metrics, log } = host;
      agent = new AgentService(clock, random, config.agent, router, metrics, limits ?? new LocalLimits(clock), log, () => host.mayWrite());
      services.set(host, agent);
      describeMetrics(host, router);
    }
    return agent;
  };
  return [(host) => inlineExtension(serviceOf(host)), (host) => threadExtension(host, router, serviceOf(host), limits, commands)];
}

/** Inline turns (Ctrl-K): a rewrite of a selection streamed into the file. */
function inlineExtension(agent: AgentService): Extension<'agent'> {
  return {
    namespace: 'agent',
    onMessage(message, session, room) {
      if (!canWrite(session.role)) return session.close(CloseCode.Forbidden, 'viewers cannot prompt or interrupt');
      // A prompt answers once admitted (the limits may live in Redis); Esc and steer at once.
      return answer(session, message.requestId, agent.handle(message, session, room, session.user?.name ?? 'Someone'));
    },
    // A tab that joins mid-turn gets the turn's state (HUD, Stop) without waiting for a flush.
    onSessionOpen(session, room) {
      for (const turn of agent.activeTurns(room)) session.sendControl({ type: 'agent.turn', turn });
    },
  };
}

/** The thread extension as a host reaches it: its messages, and a recorded turn to replay. */
export interface ThreadExtension extends Extension<'thread'> {
  /**
   * Plays a recorded agent turn (`routed`: a replay provider) as the thread's next turn, for
   * `linkId`: the demo's scripted turn, labelled by its model name (issue 37).
   */
  replay(room: Room, linkId: string, byName: string, text: string, routed: RoutedModel): AgentResult | Promise<AgentResult>;
}

/**
 * Replays a recorded turn into a workspace for an editor or owner's token (the demo's scripted
 * turn, over REST): refused for a viewer, a wrong token, or a gateway without the thread.
 */
export function replayThreadTurn(gateway: Gateway, workspaceId: string, token: string, byName: string, text: string, routed: RoutedModel): AgentResult | Promise<AgentResult> {
  const auth = gateway.authenticate(workspaceId, token);
  if (!auth.ok) return { ok: false, code: 'forbidden', message: auth.message };
  if (auth.link.role === 'viewer') return { ok: false, code: 'forbidden', message: 'Viewers watch the thread; an editor or the owner can play the replay.' };
  const thread = gateway.extension('thread') as ThreadExtension | null;
  if (!thread?.replay) return { ok: false, code: 'not_configured', message: 'This gateway runs no agent thread.' };
  const held = gateway.holdRoom(workspaceId);
  if (!held) return { ok: false, code: 'not_found', message: 'No such workspace.' };
  try {
    return thread.replay(held.room, auth.link.id, byName, text, routed);
  } finally {
    held.release();
  }
}

/** The agent thread: one conversation per workspace whose turns patch its files. */
function threadExtension(
  host: ExtensionHost,
  router: ModelRouter,
  agent: AgentService,
  limits: SharedLimits | undefined,
  commands: Pick<TerminalHost, 'runCommand'> | undefined,
): ThreadExtension {
  const { clock, random, config, metrics } = host;
  const thread = new ThreadService(clock, random, config.agent, router, metrics, agent, limits ?? agent.limits, commands);
  return {
    namespace: 'thread',
    onMessage(message, session, room) {
      if (!canWrite(session.role)) return session.close(CloseCode.Forbidden, 'viewers cannot prompt, interrupt or review');
      const { name, color } = session.user ?? { name: 'Someone', color: '#888888' };
      return answer(session, message.requestId, thread.handle(message, session, room, { name, color }));
    },
    replay(room, linkId, byName, text, routed) {
      const from = { sessionId: random.id('replay'), linkId, workspaceId: room.workspace.id, send: () => {} };
      return thread.replay(room, from, { name: cleanName(byName).slice(0, 40) || 'Someone', color: '#7c8db5' }, text, routed);
    },
    onRoomLoad(room) {
      // A turn that still shows as streaming runs on another gateway of the cluster, or ran on one
      // that is gone (this one, before a restart): the latter end as failed, with their hunks.
      room.threadLoaded.add((live) => {
        const log = new ThreadLog(live.doc, () => clock.now(), random);
        const gone = (turn: ThreadTurnRecord) => !room.gatewayAlive(turn.gateway ?? '');
        const stale = log.allTurns().filter((turn) => turn.status === 'streaming' && gone(turn));
        log.closeInterrupted(gone);
        room.endWriting(stale);
      });
    },
  };
}

/**
 * A result now, or once its admission is decided (the limits may live in Redis). A rejection
 * goes back to the kernel: a store that failed closes the session for a retry.
 */
function answer(session: ExtensionSession, requestId: number, result: AgentResult | Promise<AgentResult>): void | Promise<void> {
  const send = (answer: AgentResult) => {
    if (answer.ok) return session.sendControl({ type: 'result', requestId, ok: true, ...(answer.turnId ? { turnId: answer.turnId } : {}) });
    const retry = answer.retryAfterMs !== undefined ? { retryAfterMs: answer.retryAfterMs } : {};
    session.sendControl({ type: 'result', requestId, ok: false, code: answer.code, message: answer.message, ...retry });
  };
  if (!(result instanceof Promise)) return send(result);
  return result.then(send);
}

function describeMetrics({ metrics: m }: ExtensionHost, router: ModelRouter): void {
  m.describe('flint_thread_turns_total', 'Agent thread turns, by how they ended and route.');
  m.histogram('flint_agent_ttft_ms', [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000], 'Time from prompt to the first token, per turn.');
  m.histogram('flint_agent_tokens_per_second', [50, 100, 250, 500, 1000, 2000, 5000, 10000, 20000], 'Output tokens per second of finished turns.');
  m.describe('flint_provider_errors_total', 'Provider failures by typed code.');
  m.describe('flint_route_breaker_state', "Each configured route's circuit breaker: 1 for its state now (closed, half-open or open), 0 for the others.");
  m.gauge('flint_route_breaker_state', () => routeBreakerStates(router));
}
