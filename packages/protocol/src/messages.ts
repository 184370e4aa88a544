/** Control messages (channel 0), JSON-encoded. Split by direction, unions on `type`. */

export type Role = 'owner' | 'editor' | 'viewer';

/** The doc id of a workspace's index: the file tree. Only the gateway writes it. */
export const INDEX_DOC_ID = '~index';
/** Name of the Y.Map in the index doc: path → IndexEntry. */
export const INDEX_ENTRIES_KEY = 'entries';
/** Name of the Y.Text holding a file's content in its doc. */
export const FILE_TEXT_KEY = 'content';

export type IndexEntry = { kind: 'file'; fileId: string } | { kind: 'folder' };

export type FileOp =
  | { type: 'file.create'; requestId: number; path: string; kind: 'file' | 'folder' }
  | { type: 'file.rename'; requestId: number; from: string; to: string }
  | { type: 'file.delete'; requestId: number; path: string };

export type ClientMessage =
  | { type: 'hello'; protocolVersion: number; workspaceId: string; token: string }
  | { type: 'ping'; sentAt: number }
  | { type: 'doc.close'; docId: string }
  | FileOp;

export interface Limits {
  maxFrameBytes: number;
  maxDocBytes: number;
  maxFiles: number;
  maxMessagesPerSecond: number;
}

export type RequestErrorCode = 'forbidden' | 'invalid_path' | 'exists' | 'not_found' | 'too_many_files';

export type ServerMessage =
  | {
      type: 'welcome';
      protocolVersion: number;
      sessionId: string;
      workspaceId: string;
      workspaceName: string;
      role: Role;
      limits: Limits;
    }
  | { type: 'pong'; sentAt: number }
  /** The doc does not exist (any more): a deleted file, or a wrong id. */
  | { type: 'doc.missing'; docId: string }
  | { type: 'result'; requestId: number; ok: true }
  | { type: 'result'; requestId: number; ok: false; code: RequestErrorCode; message: string };

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
};

/** Validates a parsed JSON value as a ClientMessage; null when it is not one ([P4]). */
export function asClientMessage(value: unknown): ClientMessage | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const message = value as Record<string, unknown>;
  const type = message.type;
  if (!isString(type) || !Object.hasOwn(clientChecks, type)) return null;
  return clientChecks[type as ClientMessage['type']](message) ? (message as ClientMessage) : null;
}
