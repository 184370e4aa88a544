import { randomBytes } from 'node:crypto';
import {
  commandAllowed,
  type CheckStatus,
  type CommandApproval,
  type TerminalAvailability,
  type TerminalPerson,
  type TerminalRequest,
  type TerminalSettings,
} from '@flint/protocol';
import type { Log } from '../core/ports/Log';
import type { CommandOutcome, CommandRequest, TerminalHost, TerminalPeer } from '../core/TerminalHost';
import { defaultSandboxLimits, sandboxCommand, type SandboxLimits } from './Sandbox';
import { pidsCgroup, runsAsRoot } from './pidsCgroup';
import { Terminal } from './Terminal';

/** The folder a workspace's processes work in, held while any of its terminals runs. */
export interface WorkspaceFolder {
  root: string;
  /** Paths inside `root` the sandbox hides (the gateway's data folder). */
  hidden: string[];
  /** Called before an agent's command: documents typed a moment ago reach the folder first. */
  flush(): Promise<void>;
  release(): Promise<void>;
}

export interface FolderHooks {
  /** A line for everyone watching the workspace's terminals (a file not imported). */
  notice(line: string): void;
  /** The folder is past its disk limit: every process ends, with `line`, and the folder is let go. */
  exceeded(line: string): void;
}

export interface TerminalServiceOptions {
  /** `sandbox`: bubblewrap works here; `unsafe`: the operator's flag ran processes unconfined; else why terminals are off. */
  mode: { kind: 'sandbox' } | { kind: 'unsafe' } | { kind: 'off'; reason: string };
  /** The gateway's own folder for sandbox support files (never the workspace's). */
  supportDir: string;
  /** `hooks`: what the folder tells the workspace's terminals (see FolderHooks). */
  folder(workspaceId: string, hooks?: FolderHooks): Promise<WorkspaceFolder>;
  settings: { get(workspaceId: string): TerminalSettings | null; set(workspaceId: string, settings: TerminalSettings): void };
  log: Log;
  limits?: Partial<SandboxLimits>;
  /** Output bytes a terminal may produce per second (default 4 MiB). */
  outputBytesPerSecond?: number;
  batchMs?: number;
  /** Most terminals a workspace may hold open. */
  maxTerminals?: number;
}

export const defaultTerminalSettings: TerminalSettings = { network: false, commandPolicy: 'ask', allowedCommands: [], checkCommand: 'npm test' };

interface Running {
  terminal: Terminal;
  /**
   * Peers that receive its output. `behind`: their socket was full, they get the screen when it
   * drains; `catching`: the screen is on its way, the output since waits here to follow it.
   */
  watchers: Map<TerminalPeer, 'live' | 'behind' | { catching: string[] }>;
  /** The session that typed last (its name is shown to watchers when it changes). */
  typist: string;
  /** Frees what the sandbox holds outside its processes (its cgroup); resolves once done. */
  release(): Promise<void>;
}

interface Approval extends CommandApproval {
  decide(approved: boolean, by: string): void;
}

interface Workspace {
  id: string;
  peers: Set<TerminalPeer>;
  terminals: Map<string, Running>;
  /** Links the owner let type. */
  grants: Set<string>;
  folder: Promise<WorkspaceFolder> | null;
  approvals: Map<string, Approval>;
  check: CheckStatus | null;
}

export interface CommandResult {
  exitCode: number | null;
  /** The output as the model gets it: head and tail, with what was cut counted. */
  output: string;
  stopped: boolean;
}

/** How much of a command's output the model gets, head and tail. */
const commandHeadBytes = 6 * 1024;
const commandTailBytes = 10 * 1024;

/**
 * Shared terminals (decision 0033): per workspace, its terminals, who watches each, who may type.
 * Permissions are decided here, on the gateway: the owner opens, closes and types; the owner
 * lets a person (a link) type; everyone else watches, whatever their tab sends.
 */
export class TerminalService implements TerminalHost {
  private readonly workspaces = new Map<string, Workspace>();
  private readonly limits: SandboxLimits;
  private behindTimer: NodeJS.Timeout | null = null;
  private closing = false;
  /** Cgroups being removed: `close` waits for them, so none outlives the gateway. */
  private readonly releasing = new Set<Promise<void>>();

  constructor(private readonly options: TerminalServiceOptions) {
    this.limits = { ...defaultSandboxLimits, ...options.limits };
  }

  get availability(): TerminalAvailability {
    const mode = this.options.mode;
    if (mode.kind === 'sandbox') return { enabled: true, unsandboxed: false, reason: null };
    if (mode.kind === 'unsafe') return { enabled: true, unsandboxed: true, reason: 'The gateway runs terminals WITHOUT a sandbox (FLINT_UNSAFE_TERMINAL_WITHOUT_SANDBOX): commands can read and change everything its user can.' };
    return { enabled: false, unsandboxed: false, reason: mode.reason };
  }

  joined(peer: TerminalPeer, workspaceId: string): void {
    const workspace = this.workspace(workspaceId);
    workspace.peers.add(peer);
    this.broadcastState(workspace);
  }

  left(peer: TerminalPeer, workspaceId: string): void {
    const workspace = this.workspaces.get(workspaceId);
    if (!workspace) return;
    workspace.peers.delete(peer);
    for (const running of workspace.terminals.values()) running.watchers.delete(peer);
    // The last person left: the workspace unloads, and every process of it ends.
    if (workspace.peers.size === 0) void this.unload(workspace);
    else this.broadcastState(workspace);
  }

  handle(message: TerminalRequest, peer: TerminalPeer, workspaceId: string): void {
    const workspace = this.workspace(workspaceId);
    const isOwner = peer.role === 'owner';
    const answer = (requestId: number, error: { code: 'forbidden' | 'not_found' | 'not_configured' | 'busy'; message: string } | null, termId?: string) =>
      peer.sendTerminal(error ? { type: 'result', requestId, ok: false, ...error } : { type: 'result', requestId, ok: true, ...(termId ? { termId } : {}) });
    switch (message.type) {
      case 'term.open': {
        if (!this.availability.enabled) return answer(message.requestId, { code: 'not_configured', message: this.availability.reason ?? 'Terminals are off.' });
        if (!isOwner) return answer(message.requestId, { code: 'forbidden', message: 'Only the owner opens terminals.' });
        if (workspace.terminals.size >= (this.options.maxTerminals ?? 8)) return answer(message.requestId, { code: 'busy', message: 'This workspace has as many terminals open as it may; close one first.' });
        void this.open(workspace, { kind: 'shell', title: 'bash', by: peer.user?.name ?? 'Owner', cols: message.cols, rows: message.rows, command: ['/bin/bash', '-i'] }).then(
          (running) => {
            running.watchers.set(peer, 'live');
            answer(message.requestId, null, running.terminal.info.termId);
          },
          (error: unknown) => {
            this.options.log('error', 'a terminal did not start', { workspaceId, error: String(error) });
            answer(message.requestId, { code: 'not_configured', message: `The terminal did not start: ${(error as Error).message}` });
          },
        );
        return;
      }
      case 'term.watch': {
        const running = workspace.terminals.get(message.termId);
        if (!running) return;
        if (!message.watch) return void running.watchers.delete(peer);
        if (!running.watchers.has(peer)) this.catchUp(running, peer);
        return;
      }
      case 'term.input':
      case 'term.resize': {
        const running = workspace.terminals.get(message.termId);
        // Anyone else's keystrokes are dropped: a viewer's tab cannot type, whatever it sends.
        if (!running || !this.mayType(workspace, peer) || running.terminal.info.kind !== 'shell') return;
        if (message.type === 'term.resize') {
          running.terminal.resize(message.cols, message.rows);
          return this.broadcastState(workspace);
        }
        running.terminal.write(message.data);
        if (running.typist !== peer.sessionId) {
          running.typist = peer.sessionId;
          const name = peer.user?.name ?? 'Someone';
          for (const watcher of running.watchers.keys()) watcher.sendTerminal({ type: 'term.typist', termId: message.termId, name, color: peer.user?.color ?? '#888888' });
        }
        return;
      }
      case 'term.close': {
        if (!isOwner) return answer(message.requestId, { code: 'forbidden', message: 'Only the owner closes terminals.' });
        const running = workspace.terminals.get(message.termId);
        if (!running) return answer(message.requestId, { code: 'not_found', message: 'No such terminal.' });
        this.end(workspace, running);
        answer(message.requestId, null);
        return this.broadcastState(workspace);
      }
      case 'term.grant': {
        if (!isOwner) return answer(message.requestId, { code: 'forbidden', message: 'Only the owner lets people type.' });
        const target = [...workspace.peers].find((p) => p.linkId === message.linkId);
        if (message.mayType && target?.role !== 'editor') {
          return answer(message.requestId, { code: 'forbidden', message: target ? 'Viewers only watch: share an editor link with whoever should type.' : 'That person is not here.' });
        }
        if (message.mayType) workspace.grants.add(message.linkId);
        else workspace.grants.delete(message.linkId);
        answer(message.requestId, null);
        return this.broadcastState(workspace);
      }
      case 'term.settings': {
        if (!isOwner) return answer(message.requestId, { code: 'forbidden', message: 'Only the owner sets how commands run.' });
        this.options.settings.set(workspace.id, message.settings);
        answer(message.requestId, null);
        return this.broadcastState(workspace);
      }
      case 'term.check': {
        // The check runs project code (npm test runs package.json's script, which any editor
        // writes): only those who may type run code ([P47]).
        if (!this.mayType(workspace, peer)) return answer(message.requestId, { code: 'forbidden', message: 'Only the owner and people the owner lets type run the check.' });
        if (!this.availability.enabled) return answer(message.requestId, { code: 'not_configured', message: this.availability.reason ?? 'Terminals are off.' });
        const command = this.settingsOf(workspace.id).checkCommand?.trim();
        if (!command) return answer(message.requestId, { code: 'not_configured', message: 'No check command is set: the owner sets one in the terminal settings.' });
        if (workspace.check?.status === 'running') return answer(message.requestId, { code: 'busy', message: 'The check is running already.' });
        void this.check(workspace, command, peer.user?.name ?? 'Someone');
        return answer(message.requestId, null);
      }
      case 'term.approve': {
        if (!this.mayType(workspace, peer)) return answer(message.requestId, { code: 'forbidden', message: 'Only the owner and people the owner lets type approve commands.' });
        const approval = workspace.approvals.get(message.approvalId);
        if (!approval) return answer(message.requestId, { code: 'not_found', message: 'That command was already decided.' });
        approval.decide(message.approve, peer.user?.name ?? 'Someone');
        return answer(message.requestId, null);
      }
    }
  }

  async runCommand(request: CommandRequest): Promise<CommandOutcome> {
    const permit = await this.permitCommand(request.workspaceId, request.command, request.turnId, request.signal);
    if (!permit.ok) return { ran: false, reason: permit.reason };
    if (request.signal.aborted) return { ran: false, reason: 'The turn was stopped.' };
    try {
      const result = await this.runSandboxed(request.workspaceId, request.command, 'the agent', request.signal);
      return { ran: true, approvedBy: permit.by, ...result };
    } catch (error) {
      return { ran: false, reason: `The command did not start: ${(error as Error).message}` };
    }
  }

  /** The Check button: the configured command in a command terminal, pass or fail for everyone. */
  private async check(workspace: Workspace, command: string, by: string): Promise<void> {
    const onStart = (termId: string) => {
      workspace.check = { status: 'running', command, exitCode: null, by, termId };
    };
    try {
      const result = await this.runSandboxed(workspace.id, command, by, new AbortController().signal, undefined, onStart);
      if (workspace.check?.command === command) {
        workspace.check = { ...workspace.check, status: result.exitCode === 0 ? 'passed' : 'failed', exitCode: result.exitCode };
      }
    } catch (error) {
      this.options.log('warn', 'the check did not start', { workspaceId: workspace.id, error: String(error) });
      workspace.check = { status: 'failed', command, exitCode: null, by, termId: '' };
    }
    this.broadcastState(workspace);
  }

  settingsOf(workspaceId: string): TerminalSettings {
    return this.options.settings.get(workspaceId) ?? defaultTerminalSettings;
  }

  /**
   * Whether the agent may run `command` now: allowed at once, refused, or after an editor
   * approves it in the thread (`ask`). Resolves with who approved, or why not.
   */
  async permitCommand(workspaceId: string, command: string, turnId: string, signal: AbortSignal): Promise<{ ok: true; by: string } | { ok: false; reason: string }> {
    if (!this.availability.enabled) return { ok: false, reason: this.availability.reason ?? 'Terminals are off.' };
    const settings = this.settingsOf(workspaceId);
    if (settings.commandPolicy === 'never') return { ok: false, reason: 'The owner does not let the agent run commands in this workspace.' };
    if (settings.commandPolicy === 'allow-list') {
      return commandAllowed(command, settings.allowedCommands) ? { ok: true, by: 'the allow list' } : { ok: false, reason: `"${command}" is not on this workspace's allow list (${settings.allowedCommands.join(', ') || 'empty'}).` };
    }
    const workspace = this.workspace(workspaceId);
    const approvalId = `a${randomBytes(6).toString('hex')}`;
    return new Promise((resolve) => {
      const settle = (result: { ok: true; by: string } | { ok: false; reason: string }) => {
        if (!workspace.approvals.delete(approvalId)) return;
        signal.removeEventListener('abort', onAbort);
        this.broadcastState(workspace);
        resolve(result);
      };
      const onAbort = () => settle({ ok: false, reason: 'The turn was stopped before anyone approved the command.' });
      workspace.approvals.set(approvalId, {
        approvalId,
        command,
        turnId,
        decide: (approved, by) => settle(approved ? { ok: true, by } : { ok: false, reason: `${by} refused to run it.` }),
      });
      signal.addEventListener('abort', onAbort, { once: true });
      this.broadcastState(workspace);
    });
  }

  /**
   * Runs one command in the sandbox, in a terminal tab everyone sees; resolves when it exits or
   * `signal` aborts it (the process and its children are killed).
   */
  async runSandboxed(workspaceId: string, command: string, by: string, signal: AbortSignal, onOutput?: (data: string) => void, onStart?: (termId: string) => void): Promise<CommandResult> {
    const workspace = this.workspace(workspaceId);
    let head = '';
    let tail = '';
    let total = 0;
    let exited: (code: number) => void = () => {};
    const done = new Promise<number>((resolve) => (exited = resolve));
    const folder = await (workspace.folder ??= this.options.folder(workspace.id, this.hooks(workspace)));
    await folder.flush();
    const running = await this.open(workspace, {
      kind: 'command',
      title: command.slice(0, 60),
      by,
      cols: 120,
      rows: 30,
      command: ['/bin/bash', '-c', command],
      onOutput: (data) => {
        total += data.length;
        if (head.length < commandHeadBytes) head += data.slice(0, commandHeadBytes - head.length);
        tail = (tail + data).slice(-commandTailBytes);
        onOutput?.(data);
      },
      onExit: (code) => exited(code),
    });
    onStart?.(running.terminal.info.termId);
    this.broadcastState(workspace);
    const stop = () => this.end(workspace, running);
    signal.addEventListener('abort', stop, { once: true });
    const exitCode = await Promise.race([done, new Promise<null>((resolve) => signal.addEventListener('abort', () => resolve(null), { once: true }))]);
    signal.removeEventListener('abort', stop);
    const cut = total - commandHeadBytes - commandTailBytes;
    const output = cut > 0 ? `${head}\n… ${cut} characters cut …\n${tail}` : total <= commandHeadBytes ? head : head + tail.slice(-(total - head.length));
    return { exitCode, output: stripAnsi(output), stopped: signal.aborted };
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.behindTimer) clearInterval(this.behindTimer);
    await Promise.all([...this.workspaces.values()].map((w) => this.unload(w)));
    await Promise.all(this.releasing);
  }

  private mayType(workspace: Workspace, peer: TerminalPeer): boolean {
    return peer.role === 'owner' || (peer.role === 'editor' && workspace.grants.has(peer.linkId));
  }

  private workspace(workspaceId: string): Workspace {
    let workspace = this.workspaces.get(workspaceId);
    if (!workspace) {
      workspace = { id: workspaceId, peers: new Set(), terminals: new Map(), grants: new Set(), folder: null, approvals: new Map(), check: null };
      this.workspaces.set(workspaceId, workspace);
    }
    return workspace;
  }

  private async open(
    workspace: Workspace,
    spec: { kind: 'shell' | 'command'; title: string; by: string; cols: number; rows: number; command: string[]; onOutput?: (data: string) => void; onExit?: (code: number) => void },
  ): Promise<Running> {
    if (this.closing) throw new Error('the gateway is shutting down');
    const folder = await (workspace.folder ??= this.options.folder(workspace.id, this.hooks(workspace)));
    const termId = `t${randomBytes(6).toString('hex')}`;
    const settings = this.settingsOf(workspace.id);
    const unsafe = this.options.mode.kind === 'unsafe';
    let { file, args } = unsafe
      ? { file: spec.command[0]!, args: spec.command.slice(1) }
      : sandboxCommand({ folder: folder.root, hidden: folder.hidden, network: settings.network, limits: this.limits, supportDir: this.options.supportDir }, spec.command);
    const cgroup = !unsafe && runsAsRoot() ? pidsCgroup(`flint-${termId}`, this.limits.processes) : null;
    if (!unsafe && runsAsRoot() && !cgroup) throw new Error('the gateway runs as root and cannot make a pids cgroup to cap processes; run it as an ordinary user');
    if (cgroup) ({ file, args } = cgroup.wrap(file, args));
    // Unsafe still gets a clean environment: provider keys never reach a shell.
    const env: Record<string, string> = unsafe ? { PATH: '/usr/local/bin:/usr/bin:/bin', TERM: 'xterm-256color', HOME: folder.root, LANG: 'C.UTF-8' } : {};
    const running: Running = {
      watchers: new Map(),
      typist: '',
      release: () => cgroup?.remove() ?? Promise.resolve(),
      terminal: new Terminal({
        termId,
        kind: spec.kind,
        title: spec.title,
        openedBy: spec.by,
        cols: spec.cols,
        rows: spec.rows,
        file,
        args,
        cwd: folder.root,
        env,
        outputBytesPerSecond: this.options.outputBytesPerSecond ?? 4 * 1024 * 1024,
        batchMs: this.options.batchMs ?? 16,
        onOutput: (data) => {
          spec.onOutput?.(data);
          this.fanOut(running, data);
        },
        onExit: (code) => {
          this.release(running);
          spec.onExit?.(code);
          this.broadcastState(workspace);
        },
      }),
    };
    workspace.terminals.set(termId, running);
    this.broadcastState(workspace);
    return running;
  }

  private hooks(workspace: Workspace): FolderHooks {
    return {
      // A line of the gateway's own in every shell terminal of the workspace (its screen too).
      notice: (line) => {
        for (const running of workspace.terminals.values()) if (running.terminal.info.kind === 'shell') running.terminal.notice(line);
      },
      exceeded: (line) => {
        this.options.log('warn', "a workspace's working folder passed its disk limit; its processes were ended", { workspaceId: workspace.id });
        for (const running of workspace.terminals.values()) running.terminal.stop(line);
        // The next terminal starts from a fresh copy of the documents.
        const folder = workspace.folder;
        workspace.folder = null;
        if (folder) {
          const released: Promise<void> = folder
            .then((f) => f.release())
            .catch((error: unknown) => this.options.log('warn', "a workspace's working folder was not released", { workspaceId: workspace.id, error: String(error) }))
            .finally(() => this.releasing.delete(released));
          this.releasing.add(released);
        }
      },
    };
  }

  /**
   * A viewer whose socket is full gets no more output queued (it would stall that tab's edits
   * behind terminal bytes); once it drains it gets the screen as it is, and is live again.
   */
  private fanOut(running: Running, data: string): void {
    const termId = running.terminal.info.termId;
    for (const [peer, state] of running.watchers) {
      if (peer.terminalBacklogged()) {
        running.watchers.set(peer, 'behind');
        this.watchBehind();
      } else if (state === 'live') peer.sendTerminal({ type: 'term.output', termId, data });
      else if (typeof state === 'object') state.catching.push(data);
    }
  }

  /** Sends a watcher the screen, then what was read since it was taken: it is live from there. */
  private catchUp(running: Running, peer: TerminalPeer): void {
    const waiting = { catching: [] as string[] };
    running.watchers.set(peer, waiting);
    const termId = running.terminal.info.termId;
    running.terminal.screenAt((screen) => {
      if (running.watchers.get(peer) !== waiting) return; // unwatched or left meanwhile
      peer.sendTerminal({ type: 'term.screen', termId, data: screen });
      if (waiting.catching.length > 0) peer.sendTerminal({ type: 'term.output', termId, data: waiting.catching.join('') });
      running.watchers.set(peer, 'live');
    });
  }

  private watchBehind(): void {
    this.behindTimer ??= setInterval(() => {
      let anyBehind = false;
      for (const workspace of this.workspaces.values()) {
        for (const running of workspace.terminals.values()) {
          for (const [peer, state] of running.watchers) {
            if (state !== 'behind') continue;
            if (peer.terminalBacklogged()) {
              anyBehind = true;
              continue;
            }
            this.catchUp(running, peer);
          }
        }
      }
      if (!anyBehind && this.behindTimer) {
        clearInterval(this.behindTimer);
        this.behindTimer = null;
      }
    }, 50);
  }

  private end(workspace: Workspace, running: Running): void {
    running.terminal.kill();
    this.release(running);
    workspace.terminals.delete(running.terminal.info.termId);
  }

  private release(running: Running): void {
    const released: Promise<void> = running.release().finally(() => this.releasing.delete(released));
    this.releasing.add(released);
  }

  private async unload(workspace: Workspace): Promise<void> {
    for (const running of [...workspace.terminals.values()]) this.end(workspace, running);
    for (const approval of [...workspace.approvals.values()]) approval.decide(false, 'nobody (everyone left)');
    this.workspaces.delete(workspace.id);
    const folder = workspace.folder;
    workspace.folder = null;
    if (folder) {
      try {
        await (await folder).release();
      } catch (error) {
        this.options.log('warn', "a workspace's working folder was not released", { workspaceId: workspace.id, error: String(error) });
      }
    }
  }

  private broadcastState(workspace: Workspace): void {
    if (!this.workspaces.has(workspace.id)) return;
    const people = new Map<string, TerminalPerson>();
    for (const peer of workspace.peers) {
      if (people.has(peer.linkId) || !peer.role) continue;
      people.set(peer.linkId, { linkId: peer.linkId, name: peer.user?.name ?? 'Someone', color: peer.user?.color ?? '#888888', role: peer.role, mayType: this.mayType(workspace, peer) });
    }
    const message = {
      type: 'term.state' as const,
      availability: this.availability,
      terminals: [...workspace.terminals.values()].map((r) => ({ ...r.terminal.info })),
      people: [...people.values()],
      settings: this.settingsOf(workspace.id),
      approvals: [...workspace.approvals.values()].map(({ approvalId, command, turnId }) => ({ approvalId, command, turnId })),
      check: workspace.check,
    };
    for (const peer of workspace.peers) peer.sendTerminal({ ...message, you: { linkId: peer.linkId, mayType: this.mayType(workspace, peer) } });
  }
}

/** The model reads text, not colours and cursor moves. */
function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g, '').replace(/\r\n/g, '\n');
}
