import { FILE_TEXT_KEY, type AgentRequest, type RequestErrorCode, type TurnInfo } from '@flint/protocol';
import * as Y from 'yjs';
import type { Clock } from '../ports/Clock';
import type { Random } from '../ports/Random';
import type { AgentConfig } from '../GatewayConfig';
import type { Log } from '../ports/Log';
import type { Metrics } from '../Metrics';
import type { Room } from '../Room';
import type { Subscriber } from '../Subscriber';
import { dayMs, hourMs, type SharedLimits } from '../limits/SharedLimits';
import { AgentPeer } from './AgentPeer';
import { EditApplier } from './EditApplier';
import { buildInlineEditPrompt } from './inlineEditPrompt';
import type { ModelRouter } from './ModelRouter';
import { RejectionHistory } from './RejectionHistory';
import { resolveContentPosition } from './resolveContentPosition';
import { turnsOf } from './roomTurns';
import { Turn } from './Turn';

export type AgentResult = { ok: true; turnId?: string } | { ok: false; code: RequestErrorCode; message: string; retryAfterMs?: number };
export type Refusal = Extract<AgentResult, { ok: false }>;

/** A token budget an admission checks: what was spent under `key` over `windowMs` must stay under `max`. */
export interface BudgetRule {
  key: string;
  windowMs: number;
  max: number;
  /** Why a request is refused once it is spent. */
  message: string;
}

/**
 * The budgets of an admitted request as they stood when it was admitted. `add` counts what the
 * request spends and says why it must stop now, or null; spending by other requests meanwhile
 * counts from their next admission on.
 */
export interface Budget {
  add(tokens: number): string | null;
}

/** Who asks: a session, by what it is to the guardrails. */
export interface Prompter extends Subscriber {
  readonly workspaceId: string;
}

const workspaceTokensKey = (from: Prompter) => `tokens:workspace:${from.workspaceId}`;
const linkTokensKey = (from: Prompter) => `tokens:link:${from.linkId}`;
const instanceTokensKey = 'tokens:instance';

const agentOwner: Subscriber = { sessionId: 'agent', linkId: 'agent', send: () => {} };
const agentColor = '#c084fc';

/**
 * Runs the agent's turns: checks guardrails, builds the prompt, and streams the model's rewrite
 * into the file as the agent peer, telling every session in the room how the turn goes.
 */
export class AgentService {
  /** Per loaded doc, for as long as it is loaded: the agent's peer and what was rejected there. */
  private readonly docs = new WeakMap<Y.Doc, { peer: AgentPeer; history: RejectionHistory }>();

  constructor(
    private readonly clock: Clock,
    private readonly random: Random,
    private readonly config: AgentConfig,
    private readonly router: ModelRouter,
    private readonly metrics: Metrics,
    /** Rates and spending, shared by every gateway of a cluster (`LocalLimits` when alone). */
    readonly limits: SharedLimits,
    private readonly log: Log,
    /** Whether this gateway may still write: in a cluster, while the others count it in. */
    readonly mayWrite: () => boolean = () => true,
  ) {}

  /** A prompt answers once it is admitted (the limits may live in another process); the rest at once. */
  handle(request: AgentRequest, from: Prompter, room: Room, byName: string): AgentResult | Promise<AgentResult> {
    if (request.type === 'agent.prompt') return this.prompt(request, from, room, byName);
    const turns = turnsOf(room);
    const turn = turns.inline.get(request.turnId);
    const remote = turns.remote.get(request.turnId);
    if (!turn && remote) {
      // The turn runs on another gateway of the cluster: it stops or steers it there.
      const action = request.type === 'agent.cancel' ? 'cancel' : 'steer';
      const instruction = request.type === 'agent.steer' ? request.instruction.slice(0, 4000) : '';
      room.tellGateways({ kind: 'agent', gateway: remote.gateway, turnId: request.turnId, action, instruction });
      return { ok: true, turnId: request.turnId };
    }
    if (!turn) return { ok: false, code: 'not_found', message: 'That turn has already ended.' };
    if (request.type === 'agent.cancel') turn.cancel();
    else turn.steer(request.instruction.slice(0, 4000));
    return { ok: true, turnId: request.turnId };
  }

  private prompt(request: Extract<AgentRequest, { type: 'agent.prompt' }>, from: Prompter, room: Room, byName: string): AgentResult | Promise<AgentResult> {
    const routed = this.router(request.route, from.workspaceId);
    if (!routed) {
      return { ok: false, code: 'not_configured', message: `No model is configured for the ${request.route} route. Set OPENAI_API_KEY or FLINT_PROVIDER (see the README).` };
    }
    // Nothing is awaited between admission and the turn's start: what is checked below still holds when it starts.
    return this.admit(from).then((admitted) => (admitted.ok ? this.start(request, from, room, byName, routed) : admitted));
  }

  private start(
    request: Extract<AgentRequest, { type: 'agent.prompt' }>,
    from: Prompter,
    room: Room,
    byName: string,
    routed: NonNullable<ReturnType<ModelRouter>>,
  ): AgentResult {
    const live = room.doc(request.fileId);
    const path = room.pathOf(request.fileId);
    if (!live || path === null) return { ok: false, code: 'not_found', message: 'That file no longer exists.' };
    const turns = turnsOf(room).inline;
    for (const turn of turns.values()) {
      if (turn.snapshot.fileId === request.fileId) return { ok: false, code: 'busy', message: 'The agent is already writing in this file; stop it first (Esc).' };
    }
    // The whole file as text, once: a long file's toString is on the path of every prompt.
    const content = live.doc.getText(FILE_TEXT_KEY).toString();
    const range = resolveRange(live.doc, content, request.anchor, request.head);
    if (!range) return { ok: false, code: 'invalid_range', message: 'The selection could not be found in the file; try again.' };
    const { start, end } = range;
    const original = content.slice(start, end);
    // Small windows (the embedded model's 2k) must leave most of the room to the prompt.
    const maxOutputTokens = Math.min(this.config.maxOutputTokens, Math.floor(routed.contextTokens / 4));
    const agent = this.agentIn(live.doc);
    const prompt = buildInlineEditPrompt({
      path,
      text: content,
      start,
      end,
      instruction: request.instruction.slice(0, 4000),
      history: agent.history.notes(),
      contextTokens: routed.contextTokens,
      maxOutputTokens,
    });
    const turnId = this.random.id('t');
    const { peer } = agent;
    const agentClient = peer.clientId;
    const applier = new EditApplier(peer, turnId, original, start);
    const info = {
      turnId,
      fileId: request.fileId,
      route: request.route,
      model: routed.model,
      instruction: request.instruction.slice(0, 500),
      by: byName,
      agentClient,
      startedAt: this.clock.now(),
      note: prompt.note,
    };
    /** The agent cursor last published: unchanged while the agent writes before the same character. */
    let cursor: string | null | undefined;
    const turn = new Turn({
      info,
      route: request.route,
      provider: routed.provider,
      request: {
        model: routed.model,
        messages: prompt.messages,
        maxOutputTokens,
        temperature: 0,
        prediction: routed.supportsPrediction ? original : undefined,
        infill: prompt.infill,
        threadId: `${from.workspaceId}:${request.fileId}`,
      },
      original,
      applier,
      clock: this.clock,
      flushIntervalMs: this.config.flushIntervalMs,
      mayWrite: this.mayWrite,
      onChange: (snapshot) => {
        // To this gateway's sessions and the other gateways'.
        room.sendTurn(snapshot);
        room.tellGateways({ kind: 'turn', turn: snapshot });
        cursor = this.publishCursor(live, snapshot, snapshot.status === 'streaming' ? applier.caret() : null, turn.provisional, cursor);
      },
      onText: (snapshot) => void (cursor = this.publishCursor(live, snapshot, applier.caret(), turn.provisional, cursor)),
      onUsage: (tokens) => {
        this.spend(from, tokens);
        this.metrics.inc('flint_agent_tokens_total', { route: request.route }, tokens);
        return true;
      },
      onEnd: (snapshot) => {
        turns.delete(turnId);
        this.metrics.inc('flint_agent_turns_total', { status: snapshot.status, route: request.route });
        if (snapshot.error) this.metrics.inc('flint_provider_errors_total', { code: snapshot.error.code });
        if (snapshot.ttftMs !== null) this.metrics.observe('flint_agent_ttft_ms', snapshot.ttftMs);
        if (snapshot.tokensPerSecond !== null) this.metrics.observe('flint_agent_tokens_per_second', snapshot.tokensPerSecond);
      },
    });
    turns.set(turnId, turn);
    void turn.run();
    return { ok: true, turnId };
  }

  /**
   * The guardrails every request to the model passes, inline edit or thread message alike: one
   * rate per link, whichever gateways its sessions are on (a second service must not double it),
   * and the daily token budgets, with `rules` a service adds. When the limits cannot be read the
   * request is refused: an outage must not lift every limit.
   */
  admit(from: Prompter, rules: readonly BudgetRule[] = []): Promise<{ ok: true; budget: Budget } | Refusal> {
    const { promptsPerMinute, workspaceTokensPerDay, linkTokensPerDay, instanceTokensPerHour } = this.config;
    const all: BudgetRule[] = [
      ...(Number.isFinite(instanceTokensPerHour) ? [{ key: instanceTokensKey, windowMs: hourMs, max: instanceTokensPerHour, message: 'This gateway has used its token budget for this hour; try again later.' }] : []),
      { key: workspaceTokensKey(from), windowMs: dayMs, max: workspaceTokensPerDay, message: 'This workspace has used its token budget for today.' },
      { key: linkTokensKey(from), windowMs: dayMs, max: linkTokensPerDay, message: 'This link has used its token budget for today.' },
      ...rules,
    ];
    // One round trip to shared limits, not one per question.
    const answers = Promise.all([
      this.limits.take(`rate:${from.linkId}`, promptsPerMinute / 60, Math.min(10, promptsPerMinute)),
      Promise.all(all.map((rule) => this.limits.spent(rule.key, rule.windowMs))),
    ]);
    return answers.then(
      ([taken, spent]): { ok: true; budget: Budget } | Refusal => {
        if (!taken) return { ok: false, code: 'rate_limited', message: 'Too many requests to the agent in a row; wait a few seconds.', retryAfterMs: 2000 };
        const budget = budgetOf(all, spent);
        const over = budget.add(0);
        return over ? { ok: false, code: 'budget_exceeded', message: over } : { ok: true, budget };
      },
      (error: unknown): Refusal => {
        this.log('warn', 'refused a request to the agent: the shared limits did not answer', { linkId: from.linkId, error: String(error) });
        // No RequestErrorCode says "unavailable"; rate_limited tells the client to retry later.
        return {
          ok: false,
          code: 'rate_limited',
          message: 'The gateway cannot reach the service that keeps the agent\'s limits, so it sends nothing to the model for now; try again in a few seconds.',
          retryAfterMs: 5000,
        };
      },
    );
  }

  /** Counts tokens a request to the model used against the daily budgets of its workspace and link. */
  spend(from: Prompter, tokens: number): void {
    this.limits.spend(workspaceTokensKey(from), tokens);
    this.limits.spend(linkTokensKey(from), tokens);
    if (Number.isFinite(this.config.instanceTokensPerHour)) this.limits.spend(instanceTokensKey, tokens);
  }

  /**
   * The agent in a loaded doc. One peer, so one client id, for all its turns there (decision
   * 0008): a client id per turn made every doc gain a client per prompt, and Yjs walks all of a
   * doc's clients in every transaction, on the gateway and in every browser. Turns still tell
   * their characters apart: a hunk is a clock range of this client. The rejection history
   * follows the doc's hunk records from then on, so a prompt does not re-read them all.
   */
  agentIn(doc: Y.Doc): { peer: AgentPeer; history: RejectionHistory } {
    let agent = this.docs.get(doc);
    if (!agent) {
      let id: number;
      do id = this.random.int(1, 2 ** 31);
      while (id === doc.clientID || doc.store.clients.has(id));
      this.docs.set(doc, (agent = { peer: new AgentPeer(doc, id), history: new RejectionHistory(doc) }));
    }
    return agent;
  }

  /** Turns streaming now, for a session that just joined (its HUD and Stop button). */
  activeTurns(room: Room): TurnInfo[] {
    const { inline, remote } = turnsOf(room);
    return [...[...inline.values()].map((turn) => turn.snapshot), ...[...remote.values()].map(({ turn }) => turn)];
  }

  /**
   * The agent's cursor, labelled with the model's name, like any collaborator's. A relative
   * position points at the character after it, so while the agent inserts before the same
   * character its cursor moves with the text by itself: an unchanged state is not re-sent.
   * `pending` is the text that arrived but is not committed yet, shown in place after the
   * cursor (decision 0020); it travels with the cursor, so a tab that joins mid-stream gets it.
   * Returns the state now published.
   */
  publishCursor(
    live: NonNullable<ReturnType<Room['doc']>>,
    turn: Pick<TurnInfo, 'model' | 'agentClient'>,
    position: Record<string, unknown> | null,
    pending: string,
    previous: string | null | undefined,
  ): string | null {
    let stateJson: string | null = null;
    if (position !== null) {
      stateJson = JSON.stringify({
        user: { name: `${turn.model} (AI)`, color: agentColor, agent: true },
        selection: { anchor: position, head: position },
        ...(pending ? { pending } : {}),
      });
    }
    if (stateJson !== previous) live.broadcastAwareness([live.awareness.set(turn.agentClient, stateJson, agentOwner)], null);
    return stateJson;
  }
}

/** Resolves base64 relative positions to a range; an empty selection means its whole line. */
function resolveRange(doc: Y.Doc, content: string, anchor: string, head: string): { start: number; end: number } | null {
  const a = resolveContentPosition(doc, anchor);
  // An empty selection (a prompt at the caret) sends the same position twice.
  const b = head === anchor ? a : resolveContentPosition(doc, head);
  if (a === null || b === null) return null;
  let start = Math.min(a, b);
  let end = Math.max(a, b);
  if (start === end) {
    start = content.lastIndexOf('\n', start - 1) + 1;
    const newline = content.indexOf('\n', end);
    end = newline === -1 ? content.length : newline;
  }
  return { start, end };
}

function budgetOf(rules: readonly BudgetRule[], spentAtAdmission: readonly number[]): Budget {
  let used = 0;
  return {
    add(tokens) {
      used += tokens;
      const over = rules.find((rule, i) => spentAtAdmission[i]! + used >= rule.max);
      return over ? over.message : null;
    },
  };
}
