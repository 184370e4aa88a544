/**
 * The agent thread: one per workspace, shared by everyone in it (DESIGN §3, §10). It is a Y.Doc
 * like a file's, with the id `THREAD_DOC_ID`, that every session may subscribe to; only the
 * gateway writes it (as it writes the index), so clients read it and change it only through
 * `thread.*` requests. Rules: SPEC.md [P30]–[P35].
 */
import * as Y from 'yjs';
import type { AgentErrorCode, AgentRoute, IndexEntry } from './messages';

/** The doc id of a workspace's agent thread. */
export const THREAD_DOC_ID = '~thread';
/** Y.Array of Y.Map: the thread's messages, oldest first. */
export const THREAD_MESSAGES_KEY = 'messages';
/** Y.Map turnId → ThreadTurnRecord (plain JSON, replaced whole on each change). */
export const THREAD_TURNS_KEY = 'turns';

/** Y.Map opId → ThreadFileOp: the file operations of the thread's turns, for review ([P35]). */
export const THREAD_FILE_OPS_KEY = 'fileOps';

/** Longest message a person may send to the thread, in UTF-16 code units. */
export const MAX_THREAD_MESSAGE = 8000;
/** Most files a message may @-mention. */
export const MAX_THREAD_MENTIONS = 16;

export type ThreadMessageKind = 'user' | 'assistant' | 'tool' | 'notice';
export type ThreadToolStatus = 'running' | 'done' | 'failed';

export interface ThreadAuthor {
  name: string;
  color: string;
}

/**
 * One entry of the thread as the UI shows it. The Y.Map behind it holds the same fields, with
 * `text` as a Y.Text (the model's answer streams into it).
 */
export interface ThreadMessage {
  id: string;
  kind: ThreadMessageKind;
  turnId: string;
  at: number;
  /** Markdown for `assistant`; what the person wrote for `user`; a sentence for `notice`. */
  text: string;
  /** `user`: who wrote it. */
  author: ThreadAuthor | null;
  /** `user`: sent while the turn streamed, as a steer (or queued with Alt-Enter, until it is sent). */
  steer?: boolean;
  queued?: boolean;
  route?: AgentRoute;
  /** `tool`: the tool's name and a one-line summary ("read src/a.ts", "edited 2 files +14 −3"). */
  tool?: string;
  summary?: string;
  status?: ThreadToolStatus;
  /** `tool`: why it failed, or what the model was told (a hunk that could not be located). */
  detail?: string;
  /** `tool` / `notice`: a file (and 1-based line) the step is about; click opens it there. */
  path?: string;
  line?: number;
  /** `notice`: an error, or information (trimmed context, guardrail). */
  level?: 'info' | 'error';
}

/** What a turn did to one file, live while it streams. */
export interface ThreadFileChange {
  path: string;
  fileId: string;
  added: number;
  removed: number;
  /** 1-based line of the first change, for "open at the change". */
  line: number;
  created?: boolean;
  deleted?: boolean;
}

export type ThreadTurnStatus = 'streaming' | 'done' | 'cancelled' | 'failed';

export interface ThreadTurnRecord {
  turnId: string;
  status: ThreadTurnStatus;
  by: string;
  route: AgentRoute;
  model: string;
  startedAt: number;
  endedAt: number | null;
  ttftMs: number | null;
  outputTokens: number;
  tokensPerSecond: number | null;
  /** Model calls (steps of the tool loop) and tool calls so far. */
  steps: number;
  toolCalls: number;
  files: ThreadFileChange[];
  /** How full the model's window was at the last request, and what was left out to fit. */
  context: { usedTokens: number; windowTokens: number; trimmed: string | null };
  /** The Yjs client id of the agent in each file it wrote, by fileId: its hunks carry it. */
  agentClients: Record<string, number>;
  error: { code: AgentErrorCode | 'guardrail' | 'patch'; message: string } | null;
  /** The gateway process running the turn (several may serve a workspace); absent in older threads. */
  gateway?: string;
}

/**
 * A file operation of a turn: a file it created, renamed (or moved) or deleted. Reviewed like a
 * hunk: Reject reverses it (a created file is deleted, a rename goes back, a deleted file comes
 * back with its text and change set, since its doc is kept until then), Accept keeps it.
 */
export interface ThreadFileOp {
  opId: string;
  turnId: string;
  kind: 'create' | 'rename' | 'delete';
  /** The path it was done at (`rename`: the path it had before). */
  path: string;
  /** `rename`: where it went. */
  to?: string;
  /** `create` and `delete`: what entered or left the tree (a folder's files with it). */
  entries: Array<[string, IndexEntry]>;
  status: 'pending' | 'accepted' | 'rejected';
  /** Order of the turn's operations: Reject all reverses them last first. */
  seq: number;
}

export type ThreadFileOpReview = 'accept' | 'reject' | 'undo';

export interface ThreadView {
  messages: ThreadMessage[];
  turns: ThreadTurnRecord[];
  fileOps: ThreadFileOp[];
}

const asString = (value: unknown): string => (typeof value === 'string' ? value : '');

/** Reads a thread doc into plain values (the UI's view of it); anything malformed is skipped. */
export function readThread(doc: Y.Doc): ThreadView {
  const messages: ThreadMessage[] = [];
  for (const entry of doc.getArray<Y.Map<unknown>>(THREAD_MESSAGES_KEY).toArray()) {
    if (!(entry instanceof Y.Map)) continue;
    const fields = entry.toJSON() as Record<string, unknown>;
    const text = entry.get('text');
    const kind = fields.kind;
    if (kind !== 'user' && kind !== 'assistant' && kind !== 'tool' && kind !== 'notice') continue;
    messages.push({
      ...(fields as unknown as ThreadMessage),
      id: asString(fields.id),
      kind,
      turnId: asString(fields.turnId),
      at: typeof fields.at === 'number' ? fields.at : 0,
      text: text instanceof Y.Text ? text.toString() : asString(text),
      author: (fields.author as ThreadAuthor | undefined) ?? null,
    });
  }
  const turns: ThreadTurnRecord[] = [];
  for (const value of doc.getMap<ThreadTurnRecord>(THREAD_TURNS_KEY).values()) {
    if (typeof value === 'object' && value !== null && typeof value.turnId === 'string') turns.push(value);
  }
  turns.sort((a, b) => a.startedAt - b.startedAt);
  const fileOps: ThreadFileOp[] = [];
  for (const value of doc.getMap<ThreadFileOp>(THREAD_FILE_OPS_KEY).values()) {
    if (typeof value === 'object' && value !== null && typeof value.opId === 'string' && Array.isArray(value.entries)) fileOps.push(value);
  }
  fileOps.sort((a, b) => (a.turnId === b.turnId ? a.seq - b.seq : a.turnId < b.turnId ? -1 : 1));
  return { messages, turns, fileOps };
}

/** The context a person's message carries: the file on screen and its selection, @-mentioned paths. */
export interface ThreadContext {
  /** The file on screen, if any; `anchor`/`head`: its selection as base64 Yjs relative positions. */
  fileId?: string;
  anchor?: string;
  head?: string;
  mentions: string[];
}

export type ThreadRequest =
  /**
   * A message to the thread. While a turn streams, `mode: 'send'` steers it (its generation
   * stops, what it wrote stays, it continues with this message) and `'queue'` waits for it to end.
   */
  | { type: 'thread.send'; requestId: number; text: string; route: AgentRoute; mode: 'send' | 'queue'; context: ThreadContext }
  /** Stops the thread's streaming turn (Esc / Stop); what it wrote stays for review. */
  | { type: 'thread.stop'; requestId: number }
  /**
   * Reviews a turn's file operations ([P35]): one (`opId`) or all of the turn's. `reject`
   * reverses them, last first; `undo` takes one review back (a rejected operation is made again).
   */
  | { type: 'thread.review'; requestId: number; turnId: string; opId?: string; action: ThreadFileOpReview };

const isString = (v: unknown): v is string => typeof v === 'string';

export function isThreadContext(value: unknown): value is ThreadContext {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const c = value as Record<string, unknown>;
  return (
    (c.fileId === undefined || isString(c.fileId)) &&
    (c.anchor === undefined || isString(c.anchor)) &&
    (c.head === undefined || isString(c.head)) &&
    Array.isArray(c.mentions) &&
    c.mentions.length <= MAX_THREAD_MENTIONS &&
    c.mentions.every(isString)
  );
}
