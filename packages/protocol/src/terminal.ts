/**
 * Shared terminals (SPEC.md [P40]–[P46]): processes a workspace runs in the gateway's sandbox,
 * every byte of their screen shared with everyone in the room. Their own namespace, `term.*`,
 * on the control channel: the gateway's terminal service handles it and nothing else does.
 */

/** Most bytes one `term.input` may carry (a paste): larger pastes are split by the client. */
export const MAX_TERMINAL_INPUT = 16 * 1024;
/** Widest and tallest a terminal may be. */
export const MAX_TERMINAL_COLS = 500;
export const MAX_TERMINAL_ROWS = 200;
/** Most commands in a workspace's allow list, and longest command. */
export const MAX_ALLOWED_COMMANDS = 50;
export const MAX_COMMAND_LENGTH = 500;

/** How the agent's `run_command` is allowed in a workspace: the owner decides ([P45]). */
export type CommandPolicy = 'ask' | 'allow-list' | 'never';

export interface TerminalSettings {
  /** Whether sandboxed processes may reach the network (off by default). */
  network: boolean;
  commandPolicy: CommandPolicy;
  /** Commands `allow-list` runs without asking, compared whole after trimming (`npm test`). */
  allowedCommands: string[];
  /** The project's check (tests, type check) the Check button runs; none when absent or empty. */
  checkCommand?: string;
}

/** The last Check of a workspace ([P47]). */
export interface CheckStatus {
  status: 'running' | 'passed' | 'failed';
  command: string;
  /** Null while it runs, or when it was stopped. */
  exitCode: number | null;
  by: string;
  termId: string;
}

export interface TerminalInfo {
  termId: string;
  /** `shell`: a person's terminal; `command`: one command (the agent's `run_command`). */
  kind: 'shell' | 'command';
  title: string;
  openedBy: string;
  cols: number;
  rows: number;
  /** Null while it runs. */
  exitCode: number | null;
}

/** Someone in the room, as the terminal panel lists them for grants. */
export interface TerminalPerson {
  linkId: string;
  name: string;
  color: string;
  role: 'owner' | 'editor' | 'viewer';
  mayType: boolean;
}

export type TerminalRequest =
  /** Opens a shell in the workspace's folder (owner only). Answered by `result` with `termId`. */
  | { type: 'term.open'; requestId: number; cols: number; rows: number }
  /** Starts (or stops) receiving a terminal's output; the first output is its screen ([P42]). */
  | { type: 'term.watch'; termId: string; watch: boolean }
  /** Keystrokes: from the owner or a person granted "may type"; dropped for anyone else ([P43]). */
  | { type: 'term.input'; termId: string; data: string }
  | { type: 'term.resize'; termId: string; cols: number; rows: number }
  /** Ends a terminal and every process in it (owner only). */
  | { type: 'term.close'; requestId: number; termId: string }
  /** The owner lets a person (a link) type in the workspace's terminals, or stops them ([P43]). */
  | { type: 'term.grant'; requestId: number; linkId: string; mayType: boolean }
  | { type: 'term.settings'; requestId: number; settings: TerminalSettings }
  /** Runs the workspace's check command (owner and editors) in a command terminal ([P47]). */
  | { type: 'term.check'; requestId: number }
  /** An editor approves or refuses a command the agent asked to run ([P45]). */
  | { type: 'term.approve'; requestId: number; approvalId: string; approve: boolean };

/** Why terminals are unavailable here, or null when they run in the sandbox ([P40]). */
export interface TerminalAvailability {
  enabled: boolean;
  /** True only when the operator started the gateway with the unsafe flag. */
  unsandboxed: boolean;
  reason: string | null;
}

export type TerminalMessage =
  /** The room's terminals, people, settings and pending approvals; sent on join and on any change. */
  | {
      type: 'term.state';
      availability: TerminalAvailability;
      terminals: TerminalInfo[];
      people: TerminalPerson[];
      settings: TerminalSettings;
      approvals: CommandApproval[];
      check: CheckStatus | null;
      /** The session it is sent to: its link, and whether it may type. */
      you: { linkId: string; mayType: boolean };
    }
  /** The screen and scrollback as they are (late joiners, or a viewer that fell behind). */
  | { type: 'term.screen'; termId: string; data: string }
  | { type: 'term.output'; termId: string; data: string }
  /** Who typed last in a terminal (sent when it changes). */
  | { type: 'term.typist'; termId: string; name: string; color: string };

/** A command the agent wants to run, waiting for an editor ([P45]). */
export interface CommandApproval {
  approvalId: string;
  command: string;
  turnId: string;
}

const isString = (v: unknown): v is string => typeof v === 'string';
const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);
const isSize = (cols: unknown, rows: unknown) =>
  isInt(cols) && isInt(rows) && cols >= 2 && rows >= 1 && cols <= MAX_TERMINAL_COLS && rows <= MAX_TERMINAL_ROWS;

export function isTerminalSettings(v: unknown): v is TerminalSettings {
  if (typeof v !== 'object' || v === null) return false;
  const s = v as Record<string, unknown>;
  return (
    typeof s.network === 'boolean' &&
    (s.commandPolicy === 'ask' || s.commandPolicy === 'allow-list' || s.commandPolicy === 'never') &&
    Array.isArray(s.allowedCommands) &&
    s.allowedCommands.length <= MAX_ALLOWED_COMMANDS &&
    s.allowedCommands.every((c) => isString(c) && c.length <= MAX_COMMAND_LENGTH) &&
    (s.checkCommand === undefined || (isString(s.checkCommand) && s.checkCommand.length <= MAX_COMMAND_LENGTH))
  );
}

export const terminalChecks: Record<TerminalRequest['type'], (m: Record<string, unknown>) => boolean> = {
  'term.open': (m) => isInt(m.requestId) && isSize(m.cols, m.rows),
  'term.watch': (m) => isString(m.termId) && typeof m.watch === 'boolean',
  'term.input': (m) => isString(m.termId) && isString(m.data) && m.data.length <= MAX_TERMINAL_INPUT,
  'term.resize': (m) => isString(m.termId) && isSize(m.cols, m.rows),
  'term.close': (m) => isInt(m.requestId) && isString(m.termId),
  'term.grant': (m) => isInt(m.requestId) && isString(m.linkId) && typeof m.mayType === 'boolean',
  'term.settings': (m) => isInt(m.requestId) && isTerminalSettings(m.settings),
  'term.check': (m) => isInt(m.requestId),
  'term.approve': (m) => isInt(m.requestId) && isString(m.approvalId) && typeof m.approve === 'boolean',
};

/** Whether a command is on an allow list: compared whole, blanks collapsed ([P45]). */
export function commandAllowed(command: string, allowed: readonly string[]): boolean {
  const norm = (c: string) => c.trim().replace(/\s+/g, ' ');
  const wanted = norm(command);
  return wanted !== '' && allowed.some((c) => norm(c) === wanted);
}
