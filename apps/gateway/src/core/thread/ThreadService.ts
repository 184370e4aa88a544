import { terminalsOff, type TerminalHost } from '../TerminalHost';
import {
  FILE_TEXT_KEY,
  type AgentRoute,
  type ThreadAuthor,
  type ThreadContext,
  type ThreadRequest,
  type ThreadTurnRecord,
} from '@flint/protocol';
import type { AgentResult, AgentService, Budget, BudgetRule, Prompter } from '../agent/AgentService';
import type { ModelRouter } from '../agent/ModelRouter';
import { resolveContentPosition } from '../agent/resolveContentPosition';
import { turnsOf } from '../agent/roomTurns';
import type { Clock } from '../ports/Clock';
import type { Random } from '../ports/Random';
import type { AgentConfig } from '../GatewayConfig';
import type { Metrics } from '../Metrics';
import type { Room } from '../Room';
import { hourMs, type SharedLimits } from '../limits/SharedLimits';
import { ThreadFileOps } from './ThreadFileOps';
import { ThreadLog } from './ThreadLog';
import { buildThreadPrompt, type HistoryEntry } from './threadPrompt';
import { THREAD_TOOLS } from './threadTools';
import { ThreadTurn, type ThreadTurnOptions } from './ThreadTurn';

/** A message sent with Alt-Enter while a turn streamed: it starts the next turn. */
interface Queued {
  messageId: string;
  text: string;
  route: AgentRoute;
  context: ThreadContext;
  author: ThreadAuthor;
  from: Prompter;
}

/** Said once per thread, and only what the bundled model does: people judge Flint by this turn. */
const demoNotice =
  'This workspace runs the bundled demo model, flint-tiny: a ~0.9M-parameter code completer, not an agent. It has no tools and follows no instructions, so it reads no files, writes no patches and will not answer you: its reply is your message continued as code-looking text. For a real agent, the owner of the workspace can connect a model from the agent panel, or start the gateway with one, e.g. `OPENAI_BASE_URL=https://api.groq.com/openai/v1 OPENAI_API_KEY=… FLINT_MODEL_FAST=openai/gpt-oss-120b npm start` (any OpenAI-compatible server; OPENAI_API_KEY alone for OpenAI) — README, "Point Flint at a model".';

/** Said at the top of every replayed turn: what follows was recorded, no model is answering. */
const replayNotice = 'This is a replay of a recorded agent turn, not a live model: it streams into the files as the agent did, and you can review it like any turn. Connect a model to ask for your own changes.';

/**
 * The workspace's agent thread (issue 23): takes people's messages, runs one turn at a time per
 * workspace (a message while it streams steers it, or waits with Alt-Enter), and keeps the
 * thread in its doc, so every session sees it live and it survives a restart.
 */
export class ThreadService {
  private readonly queues = new WeakMap<Room, Queued[]>();
  /** What the model last read of each file, per room: a patch to a file changed since is told so. */
  private readonly reads = new WeakMap<Room, Map<string, string>>();
  /**
   * A message being admitted, per room: requests that arrive meanwhile wait for it, so they
   * steer, queue behind or stop the turn it starts, as they would had it started at once.
   */
  private readonly starting = new WeakMap<Room, Promise<AgentResult>>();

  constructor(
    private readonly clock: Clock,
    private readonly random: Random,
    private readonly config: AgentConfig,
    private readonly router: ModelRouter,
    private readonly metrics: Metrics,
    private readonly agent: AgentService,
    private readonly limits: SharedLimits,
    /** Where the agent's `run_command` runs (the terminal extension; off: it is refused). */
    private readonly commands: Pick<TerminalHost, 'runCommand'> = terminalsOff,
  ) {}

  /** A message that starts a turn answers once it is admitted (the limits may live in another process). */
  handle(request: ThreadRequest, from: Prompter, room: Room, author: ThreadAuthor): AgentResult | Promise<AgentResult> {
    // Any gateway can review: the tree and the thread doc are shared by the cluster.
    if (request.type === 'thread.review') return this.review(request, room);
    const starting = this.starting.get(room);
    if (starting) return starting.then(() => this.handle(request, from, room, author));
    const running = turnsOf(room).thread;
    // The turn runs on another gateway of the cluster: the message or Stop is handled there.
    const elsewhere = running ? null : room.threadTurnElsewhere();
    if (elsewhere) {
      room.tellGateways({ kind: 'thread', gateway: elsewhere.gateway, request, linkId: from.linkId, author });
      return { ok: true, turnId: elsewhere.turnId };
    }
    if (request.type === 'thread.stop') {
      if (!running) return { ok: false, code: 'not_found', message: 'The agent is not writing.' };
      // Stop means stop: messages queued behind the turn are not sent, and the thread says so.
      const dropped = this.queues.get(room)?.splice(0) ?? [];
      const log = this.logOf(room);
      for (const queued of dropped) log.update(queued.messageId, { queued: undefined });
      if (dropped.length) log.append({ kind: 'notice', turnId: running.turnId, level: 'info' }, `Stopped by ${author.name}; ${dropped.length} queued message${dropped.length === 1 ? ' was' : 's were'} not sent.`);
      running.stop(`Stopped by ${author.name}.`);
      return { ok: true, turnId: running.turnId };
    }
    const text = request.text.trim();
    if (!text) return { ok: false, code: 'invalid_message', message: 'Write a message first.' };
    const log = this.logOf(room);
    if (running) {
      const who = { name: author.name, color: author.color };
      if (request.mode === 'queue') {
        const messageId = log.append({ kind: 'user', turnId: running.turnId, author: who, queued: true, route: request.route }, text);
        let queue = this.queues.get(room);
        if (!queue) this.queues.set(room, (queue = []));
        queue.push({ messageId, text, route: request.route, context: request.context, author: who, from });
        return { ok: true, turnId: running.turnId };
      }
      log.append({ kind: 'user', turnId: running.turnId, author: who, steer: true, route: request.route }, text);
      running.steer(text, who);
      return { ok: true, turnId: running.turnId };
    }
    return this.start({ messageId: null, text, route: request.route, context: request.context, author, from }, room);
  }

  /** Accept, reject or undo a turn's file operations ([P35]); hunks are reviewed in the files. */
  private review(request: Extract<ThreadRequest, { type: 'thread.review' }>, room: Room): AgentResult {
    const running = turnsOf(room).thread ?? room.threadTurnElsewhere();
    if (running?.turnId === request.turnId) return { ok: false, code: 'busy', message: 'The agent is still working in this turn; review it once it ends.' };
    const result = new ThreadFileOps(room, room.thread.doc).review(request.turnId, request.opId, request.action);
    return result.ok ? { ok: true, turnId: request.turnId } : result;
  }

  private logOf(room: Room): ThreadLog {
    return new ThreadLog(room.thread.doc, () => this.clock.now(), this.random);
  }

  /**
   * Plays a recorded turn (a replay provider, `routed`) as the thread's next turn, through the
   * same engine as a live one: its edits stream into the files with the agent's cursor and wait
   * for review. Refused while a turn runs, so a replay never steers a live turn.
   */
  replay(room: Room, from: Prompter, author: ThreadAuthor, text: string, routed: NonNullable<ReturnType<ModelRouter>>): AgentResult | Promise<AgentResult> {
    if (this.starting.get(room) || turnsOf(room).thread || room.threadTurnElsewhere()) return { ok: false, code: 'busy', message: 'The agent is working in this workspace; play the replay once it finishes.' };
    const started = this.start({ messageId: null, text, route: 'fast', context: { mentions: [] }, author, from }, room, routed);
    const label = (result: AgentResult): AgentResult => {
      if (result.ok && result.turnId) this.logOf(room).append({ kind: 'notice', turnId: result.turnId, level: 'info' }, replayNotice);
      return result;
    };
    return started instanceof Promise ? started.then(label) : label(started);
  }

  private start(message: Omit<Queued, 'messageId'> & { messageId: string | null }, room: Room, replay?: NonNullable<ReturnType<ModelRouter>>): AgentResult | Promise<AgentResult> {
    const routed = replay ?? this.router(message.route, room.workspace.id);
    if (!routed) {
      return { ok: false, code: 'not_configured', message: `No model is configured for the ${message.route} route. Set OPENAI_API_KEY or FLINT_PROVIDER (see the README).` };
    }
    // Nothing is awaited between admission and the turn's start: no other turn can begin meanwhile (`starting`).
    const admission = this.agent.admit(message.from, [this.hourlyRule(message.from)]).then((admitted): AgentResult => {
      this.starting.delete(room);
      if (!admitted.ok) return admitted;
      // Another gateway of the cluster may have started a turn while this message was admitted:
      // it steers that one, there, rather than starting a second.
      const elsewhere = message.messageId === null ? room.threadTurnElsewhere() : null;
      if (elsewhere) {
        const request = { type: 'thread.send' as const, requestId: 0, text: message.text, route: message.route, mode: 'send' as const, context: message.context };
        room.tellGateways({ kind: 'thread', gateway: elsewhere.gateway, request, linkId: message.from.linkId, author: message.author });
        return { ok: true, turnId: elsewhere.turnId };
      }
      return this.begin(message, room, routed, admitted.budget);
    });
    this.starting.set(room, admission);
    return admission;
  }

  private begin(
    message: Omit<Queued, 'messageId'> & { messageId: string | null },
    room: Room,
    routed: NonNullable<ReturnType<ModelRouter>>,
    budget: Budget,
  ): AgentResult {
    const { from } = message;
    const log = this.logOf(room);
    const turnId = this.random.id('t');
    const author = { name: message.author.name, color: message.author.color };
    // The thread before this message, for the prompt (which adds the message itself, once).
    const history: HistoryEntry[] = log.transcript().map((entry) => ({
      kind: entry.fields.kind as HistoryEntry['kind'],
      text: entry.text,
      author: (entry.fields.author as ThreadAuthor | null)?.name,
      summary: entry.fields.summary as string | undefined,
    }));
    if (message.messageId) log.update(message.messageId, { queued: undefined, turnId });
    else log.append({ kind: 'user', turnId, author, route: message.route }, message.text);

    const mode = routed.supportsTools ? 'tools' : 'text';
    if (mode === 'text' && routed.provider.kind === 'embedded' && !history.some((entry) => entry.kind === 'notice' && entry.text === demoNotice)) {
      log.append({ kind: 'notice', turnId, level: 'info' }, demoNotice);
    }
    const maxOutputTokens = Math.min(this.config.maxOutputTokens, Math.floor(routed.contextTokens / 4));
    const prompt = buildThreadPrompt({
      mode,
      paths: this.paths(room),
      history,
      open: this.openFile(room, message.context),
      mentions: message.context.mentions.flatMap((path) => {
        const fileId = room.fileIdAt(path);
        const live = fileId ? room.doc(fileId) : null;
        return live ? [{ path, text: live.doc.getText(FILE_TEXT_KEY).toString() }] : [];
      }),
      rejected: this.rejections(room, log.allTurns()),
      message: message.text,
      by: author.name,
      contextTokens: routed.contextTokens,
      maxOutputTokens,
    });
    if (prompt.trimmed) log.append({ kind: 'notice', turnId, level: 'info' }, prompt.trimmed);

    const record: ThreadTurnRecord = {
      turnId,
      status: 'streaming',
      by: author.name,
      route: message.route,
      model: routed.model,
      startedAt: this.clock.now(),
      endedAt: null,
      ttftMs: null,
      outputTokens: 0,
      tokensPerSecond: null,
      steps: 0,
      toolCalls: 0,
      files: [],
      context: { usedTokens: prompt.usedTokens, windowTokens: routed.contextTokens, trimmed: prompt.trimmed },
      agentClients: {},
      error: null,
      gateway: room.gatewayId,
    };
    const reads = this.readsOf(room);
    const cursors = new Map<string, string | null>();
    const fileOps = new ThreadFileOps(room, room.thread.doc);
    const options: ThreadTurnOptions = {
      record,
      provider: routed.provider,
      model: routed.model,
      mode,
      tools: THREAD_TOOLS,
      threadId: `${from.workspaceId}:thread`,
      messages: prompt.messages,
      maxOutputTokens,
      log,
      clock: this.clock,
      flushIntervalMs: this.config.flushIntervalMs,
      limits: { toolCalls: this.config.threadToolCallsPerTurn, tokens: this.config.threadTokensPerTurn },
      workspace: {
        paths: () => this.paths(room),
        read: (path) => {
          const fileId = room.fileIdAt(path);
          const live = fileId ? room.doc(fileId) : null;
          return fileId && live ? { fileId, text: live.doc.getText(FILE_TEXT_KEY).toString() } : null;
        },
        peek: (path) => {
          const fileId = room.fileIdAt(path);
          return fileId ? room.textOf(fileId) : null;
        },
        // The agent's file operations are recorded for review (decision 0026).
        rename: (from, to) => fileOps.rename(record.turnId, from, to),
        remove: (path) => fileOps.remove(record.turnId, path),
        fileIdAt: (path) => room.fileIdAt(path),
        docOf: (fileId) => room.doc(fileId)?.doc ?? null,
        peerOf: (doc) => this.agent.agentIn(doc).peer,
        createFile: (path) => fileOps.create(record.turnId, path),
        deleteFile: (path) => fileOps.remove(record.turnId, path),
        moveFile: (from, to) => fileOps.rename(record.turnId, from, to),
        lastRead: (fileId) => reads.get(fileId),
        noteRead: (fileId, text) => reads.set(fileId, text),
        runCommand: (command, signal) => this.commands.runCommand({ workspaceId: from.workspaceId, command, turnId: record.turnId, signal }),
      },
      onUsage: (tokens) => {
        this.agent.spend(from, tokens);
        this.limits.spend(this.hourlyRule(from).key, tokens);
        this.metrics.inc('flint_agent_tokens_total', { route: message.route }, tokens);
        return budget.add(tokens);
      },
      cursor: (fileId, caret, pending) => {
        const live = fileId ? room.doc(fileId) : null;
        if (!live || !fileId) return;
        const agentClient = this.agent.agentIn(live.doc).peer.clientId;
        cursors.set(fileId, this.agent.publishCursor(live, { model: routed.model, agentClient }, caret, pending, cursors.get(fileId)));
      },
      mayWrite: this.agent.mayWrite,
      onEnd: (ended) => {
        if (turnsOf(room).thread === turn) turnsOf(room).thread = null;
        this.metrics.inc('flint_thread_turns_total', { status: ended.status, route: message.route });
        if (ended.ttftMs !== null) this.metrics.observe('flint_agent_ttft_ms', ended.ttftMs);
        this.next(room);
      },
    };
    const turn = new ThreadTurn(options);
    turnsOf(room).thread = turn;
    void turn.run();
    return { ok: true, turnId };
  }

  /** After a turn: the first queued message starts the next one. */
  private next(room: Room): void {
    const queue = this.queues.get(room);
    const queued = queue?.shift();
    if (!queued) return;
    void Promise.resolve(this.start(queued, room)).then((result) => {
      if (result.ok) return;
      const log = this.logOf(room);
      log.update(queued.messageId, { queued: undefined });
      log.append({ kind: 'notice', turnId: '', level: 'error' }, `The queued message from ${queued.author.name} could not be sent: ${result.message}`);
      this.next(room);
    });
  }

  /** The thread's own budget, on top of the daily ones: tokens per workspace per clock hour. */
  private hourlyRule(from: Prompter): BudgetRule {
    return {
      key: `thread-tokens:workspace:${from.workspaceId}`,
      windowMs: hourMs,
      max: this.config.threadTokensPerWorkspaceHour,
      message: 'This workspace has used its agent tokens for this hour; try again later.',
    };
  }

  private paths(room: Room): string[] {
    const paths: string[] = [];
    for (const [path, entry] of room.entries) if (entry.kind === 'file') paths.push(path);
    return paths.sort();
  }

  private readsOf(room: Room): Map<string, string> {
    let reads = this.reads.get(room);
    if (!reads) this.reads.set(room, (reads = new Map()));
    return reads;
  }

  /** The file on screen and its selection (whole lines), from the message's context. */
  private openFile(room: Room, context: ThreadContext) {
    if (!context.fileId) return null;
    const path = room.pathOf(context.fileId);
    const live = path === null ? null : room.doc(context.fileId);
    if (!live || path === null) return null;
    const text = live.doc.getText(FILE_TEXT_KEY).toString();
    const a = context.anchor ? resolveContentPosition(live.doc, context.anchor) : null;
    const b = context.head ? resolveContentPosition(live.doc, context.head) : null;
    if (a === null || b === null || a === b) return { path, text, selection: null };
    const start = Math.min(a, b);
    const end = Math.max(a, b);
    const lineOf = (index: number) => text.slice(0, index).split('\n').length;
    return { path, text, selection: { startLine: lineOf(start), endLine: lineOf(end), text: text.slice(start, end) } };
  }

  /** What people rejected in the files the thread's recent turns wrote. */
  private rejections(room: Room, turns: ThreadTurnRecord[]): string[] {
    const notes: string[] = [];
    const seen = new Set<string>();
    for (const turn of turns.slice(-5)) {
      for (const change of turn.files) {
        if (seen.has(change.fileId)) continue;
        seen.add(change.fileId);
        const live = room.doc(change.fileId);
        const path = room.pathOf(change.fileId);
        if (!live || path === null) continue;
        for (const note of this.agent.agentIn(live.doc).history.notes()) notes.push(`${path}: ${note}`);
      }
    }
    return notes;
  }
}
