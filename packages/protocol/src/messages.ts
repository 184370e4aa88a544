/** Control messages (channel 0), JSON-encoded. Split by direction, unions on `type`. */
import { isReplaceFiles, isReplacement, isSearchQuery, type SearchAnswer, type SearchRequest } from './search';
import { terminalChecks, type TerminalMessage, type TerminalRequest } from './terminal';
import { isThreadContext, MAX_THREAD_MESSAGE, type ThreadRequest } from './thread';

export type Role = 'owner' | 'editor' | 'viewer';

/** The doc id of a workspace's index: the file tree. Only the gateway writes it. */
export const INDEX_DOC_ID = '~index';
/** Name of the Y.Map in the index doc: path → IndexEntry. */
export const INDEX_ENTRIES_KEY = 'entries';
/** Name of the Y.Text holding a file's content in its doc. */
export const FILE_TEXT_KEY = 'content';

/**
 * A file or a folder of the tree. `binary` (folder projects): a file kept on disk that is not
 * text or too large to edit; it shows in the tree with its size and has no document.
 * `unsynced` (folder projects): the file on disk stopped being text Flint edits while it had a
 * document (re-saved in another encoding, or grown past the largest text it syncs); the document
 * keeps everything typed but is not written to disk until the file is text again. A tab says so.
 */
/**
 * `listed`: a folder project's file known by its listing only — no document yet, the disk holds
 * its text; the gateway makes its document when someone (or the agent) first opens or edits it.
 */
export type IndexEntry = { kind: 'file'; fileId: string; binary?: true; bytes?: number; unsynced?: UnsyncedReason; listed?: true } | { kind: 'folder' };

/** Why a folder project's document stopped reaching its file: not UTF-8 text any more, or too large. */
export type UnsyncedReason = 'not-text' | 'too-large';

export type FileOp =
  | { type: 'file.create'; requestId: number; path: string; kind: 'file' | 'folder' }
  | { type: 'file.rename'; requestId: number; from: string; to: string }
  | { type: 'file.delete'; requestId: number; path: string };

export type AgentRoute = 'fast' | 'deep';

export type AgentRequest =
  /**
   * Rewrite a region of a file. `anchor`/`head` are base64 Yjs relative positions in the file's
   * text (equal: the whole line at that position).
   */
  | { type: 'agent.prompt'; requestId: number; fileId: string; anchor: string; head: string; instruction: string; route: AgentRoute }
  /** Stop a turn (Esc / Stop): what was written stays as reviewable hunks. */
  | { type: 'agent.cancel'; requestId: number; turnId: string }
  /** Redirect a streaming turn: it continues from its partial output with the new instruction. */
  | { type: 'agent.steer'; requestId: number; turnId: string; instruction: string };

/** What the typing user did with a suggestion, for metrics ([P28]). */
export type CompletionOutcome = 'shown' | 'accepted' | 'dismissed';

/** Most files a completion request may name as open, for snippets ([P25]). */
export const MAX_COMPLETION_OPEN_FILES = 32;

export type CompletionRequest =
  /**
   * Ghost text at the cursor ([P25]). `position` is a base64 Yjs relative position in the file's
   * text; the gateway reads the text around it in its own copy of the doc.
   */
  | { type: 'complete.request'; requestId: number; fileId: string; position: string; openFileIds: string[] }
  /** Stops an in-flight completion ([P27]). */
  | { type: 'complete.cancel'; requestId: number }
  /** `latencyMs`: for `shown`, keystroke to ghost text as the client measured it ([P28]). */
  | { type: 'complete.feedback'; requestId: number; outcome: CompletionOutcome; latencyMs: number };

export type ClientMessage =
  | { type: 'hello'; protocolVersion: number; workspaceId: string; token: string }
  | { type: 'ping'; sentAt: number }
  | { type: 'doc.close'; docId: string }
  | FileOp
  | AgentRequest
  | ThreadRequest
  | CompletionRequest
  | SearchRequest
  | TerminalRequest;

export interface Limits {
  maxFrameBytes: number;
  maxDocBytes: number;
  maxFiles: number;
  maxMessagesPerSecond: number;
}

export type RequestErrorCode =
  | 'forbidden'
  | 'invalid_path'
  | 'exists'
  | 'not_found'
  | 'too_many_files'
  | 'invalid_range'
  | 'invalid_message'
  | 'busy'
  | 'rate_limited'
  | 'budget_exceeded'
  | 'not_configured';

export type TurnStatus = 'streaming' | 'done' | 'cancelled' | 'failed';

/** Typed provider failures, as the UI shows them (DESIGN §6). */
export type AgentErrorCode =
  | 'not_configured'
  | 'auth'
  | 'rate_limited'
  | 'quota'
  | 'context_length'
  | 'overloaded'
  | 'network'
  | 'bad_response'
  | 'circuit_open'
  | 'budget_exceeded'
  | 'internal';

/** A turn as every session in the room sees it; sent on start, on progress and at the end. */
export interface TurnInfo {
  turnId: string;
  fileId: string;
  status: TurnStatus;
  route: AgentRoute;
  model: string;
  instruction: string;
  /** Display name of whoever prompted. */
  by: string;
  /** The Yjs client id the agent writes this turn with; its hunks and cursor carry it. */
  agentClient: number;
  startedAt: number;
  ttftMs: number | null;
  outputTokens: number;
  tokensPerSecond: number | null;
  /** Set when the prompt was trimmed to fit the model's window. */
  note: string | null;
  error: { code: AgentErrorCode; message: string; retryAfterMs: number | null } | null;
}

export type CompletionStatus = 'done' | 'cancelled' | 'failed';

/** Why a completion failed: a provider failure, or the request itself ([P26]). */
export type CompletionErrorCode = AgentErrorCode | 'not_found' | 'invalid_range';

export interface CompletionError {
  code: CompletionErrorCode;
  message: string;
  retryAfterMs: number | null;
}

export type ServerMessage =
  | {
      type: 'welcome';
      protocolVersion: number;
      sessionId: string;
      workspaceId: string;
      workspaceName: string;
      role: Role;
      limits: Limits;
      /** The gateway serving this session (its id in /healthz): which one a tab landed on in a cluster. */
      gateway?: string;
    }
  | { type: 'pong'; sentAt: number }
  /** The doc does not exist (any more): a deleted file, or a wrong id. */
  | { type: 'doc.missing'; docId: string }
  | { type: 'result'; requestId: number; ok: true; turnId?: string; termId?: string }
  | { type: 'result'; requestId: number; ok: false; code: RequestErrorCode; message: string; retryAfterMs?: number }
  | { type: 'agent.turn'; turn: TurnInfo }
  | SearchAnswer
  | TerminalMessage
  /** Model text of an in-flight completion, cut at its boundary; provisional ([P26]). */
  | { type: 'complete.delta'; requestId: number; text: string }
  /**
   * The one answer to a `complete.request` ([P26]). `text` (done only) is the suggestion to show,
   * always a prefix of the deltas joined; empty means none. `latencyMs`: request to result, on
   * the gateway.
   */
  | {
      type: 'complete.result';
      requestId: number;
      status: CompletionStatus;
      text: string;
      model: string;
      latencyMs: number | null;
      error: CompletionError | null;
    };

export function canWrite(role: Role): boolean {
  return role !== 'viewer';
}

type Check = (value: Record<string, unknown>) => boolean;
const isString = (v: unknown): v is string => typeof v === 'string';
const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);

const clientChecks: Record<ClientMessage['type'], Check> = {
  hello: (m) => isInt(m.protocolVersion) && isString(m.workspaceId) && isString(m.token),
  ping: (m) => typeof m.sentAt === 'number' && Number.isFinite(m.sentAt),
  'doc.close': (m) => isString(m.docId),
  'file.create': (m) => isInt(m.requestId) && isString(m.path) && (m.kind === 'file' || m.kind === 'folder'),
  'file.rename': (m) => isInt(m.requestId) && isString(m.from) && isString(m.to),
  'file.delete': (m) => isInt(m.requestId) && isString(m.path),
  'agent.prompt': (m) =>
    isInt(m.requestId) &&
    isString(m.fileId) &&
    isString(m.anchor) &&
    isString(m.head) &&
    isString(m.instruction) &&
    (m.route === 'fast' || m.route === 'deep'),
  'agent.cancel': (m) => isInt(m.requestId) && isString(m.turnId),
  'agent.steer': (m) => isInt(m.requestId) && isString(m.turnId) && isString(m.instruction),
  'thread.send': (m) =>
    isInt(m.requestId) &&
    isString(m.text) &&
    m.text.length <= MAX_THREAD_MESSAGE &&
    (m.route === 'fast' || m.route === 'deep') &&
    (m.mode === 'send' || m.mode === 'queue') &&
    isThreadContext(m.context),
  'thread.stop': (m) => isInt(m.requestId),
  'thread.review': (m) =>
    isInt(m.requestId) &&
    isString(m.turnId) &&
    (m.opId === undefined || isString(m.opId)) &&
    (m.action === 'accept' || m.action === 'reject' || m.action === 'undo'),
  'complete.request': (m) =>
    isInt(m.requestId) &&
    isString(m.fileId) &&
    isString(m.position) &&
    Array.isArray(m.openFileIds) &&
    m.openFileIds.length <= MAX_COMPLETION_OPEN_FILES &&
    m.openFileIds.every(isString),
  'complete.cancel': (m) => isInt(m.requestId),
  'complete.feedback': (m) =>
    isInt(m.requestId) &&
    (m.outcome === 'shown' || m.outcome === 'accepted' || m.outcome === 'dismissed') &&
    typeof m.latencyMs === 'number' &&
    Number.isFinite(m.latencyMs) &&
    m.latencyMs >= 0,
  'search.run': (m) => isInt(m.requestId) && isSearchQuery(m.query),
  'search.replace': (m) => isInt(m.requestId) && isSearchQuery(m.query) && isReplacement(m.replacement) && isReplaceFiles(m.fileIds),
  'search.undo': (m) => isInt(m.requestId),
  ...terminalChecks,
};

/** Validates a parsed JSON value as a ClientMessage; null when it is not one ([P4]). */
export function asClientMessage(value: unknown): ClientMessage | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const message = value as Record<string, unknown>;
  const type = message.type;
  if (!isString(type) || !Object.hasOwn(clientChecks, type)) return null;
  return clientChecks[type as ClientMessage['type']](message) ? (message as ClientMessage) : null;
}

/**
 * The colours peers are drawn in: a tab picks one when it first runs, and the gateway gives a
 * session another, the first of these no one present shows, when its pick is taken ([P13]).
 */
export const PEER_COLORS = ['#f5a524', '#4cc9f0', '#f72585', '#7bd88f', '#b392f0', '#ff7a59', '#2ec4b6', '#ffd166', '#ef476f', '#6c9eff', '#e879f9', '#a3e635'] as const;
