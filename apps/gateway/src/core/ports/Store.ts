import type { Role } from '@flint/protocol';

export interface WorkspaceRecord {
  id: string;
  name: string;
  createdAt: number;
}

export interface LinkRecord {
  id: string;
  workspaceId: string;
  role: Role;
  /** SHA-256 of the token, hex. The token itself is never stored. */
  tokenHash: string;
  label: string;
  createdAt: number;
  expiresAt: number | null;
  revokedAt: number | null;
}

/** A document's persisted updates, in order, and how many bytes they hold. */
export interface StoredDoc {
  updates: Uint8Array[];
  bytes: number;
}

export interface SetAsideUpdate {
  data: Uint8Array;
  reason: string;
  at: number;
}

/** A store that could not do what it was asked (its server did not answer, or refused). */
export class StoreError extends Error {
  override name = 'StoreError';
}

/**
 * Persistence for workspaces, links and Yjs documents. Synchronous on purpose: the default
 * SQLite store commits in microseconds, and a synchronous append lets the room persist an
 * update before it broadcasts it (DESIGN §8) without an await on the hot path.
 * See docs/decisions/0002-synchronous-store.md.
 */
export interface Store {
  createWorkspace(workspace: WorkspaceRecord): void;
  getWorkspace(id: string): WorkspaceRecord | null;
  /**
   * Deletes a workspace and everything stored for it, atomically: its links, its documents'
   * updates and set-aside updates (keys "workspaceId/…"), and the metadata keyed by it (keys
   * ending ":workspaceId"). An expired playground workspace leaves nothing behind.
   */
  deleteWorkspace(id: string): void;
  /** Reads a small piece of gateway state (e.g. which workspace is the demo). */
  getMeta(key: string): string | null;
  setMeta(key: string, value: string): void;

  createLink(link: LinkRecord): void;
  findLinkByTokenHash(tokenHash: string): LinkRecord | null;
  getLink(id: string): LinkRecord | null;
  listLinks(workspaceId: string): LinkRecord[];
  revokeLink(id: string, revokedAt: number): void;
  /**
   * Which of these links are revoked now. May answer later (a networked store): a gateway of a
   * cluster asks in the background, every few seconds, for the links of its open sessions, so
   * a revocation holds even when the message announcing it was lost (DESIGN §11.5).
   */
  revokedLinks(ids: readonly string[]): string[] | Promise<string[]>;

  /**
   * Appends one update to a document ("workspaceId/docId"). Durable when it returns, or, when it
   * returns a promise (a networked store), when that resolves: the gateway may show the change to
   * its own sessions meanwhile (they hold it, and resend it if the gateway dies), but never tells
   * other gateways of it before (decision 0024).
   */
  appendUpdate(docKey: string, update: Uint8Array): void | Promise<void>;
  loadDoc(docKey: string): StoredDoc;
  /**
   * Replaces the document's stored updates by one update, atomically. `merged` is the caller's
   * state of the document as a Yjs update, holding everything it loaded and appended. The update
   * left holds at least `merged`: SqliteStore (one gateway, the only writer) stores exactly
   * `merged`; PostgresStore, whose database other gateways append to, stores `merged` merged with
   * the rows it replaces, so updates the caller never received are kept. Updates appended after
   * the compaction follow it.
   */
  compactDoc(docKey: string, merged: Uint8Array): void;
  /** Deletes the document's updates and the claims on its Yjs client ids. */
  deleteDoc(docKey: string): void;
  /**
   * The link that claimed a Yjs client id in a document (a tab showed it as its own cursor and
   * wrote with it), or null. Claims outlive the loaded document — an unload, a restart, another
   * gateway of the cluster — so another link can never write under that person's id and take the
   * clocks of her offline work (DESIGN §11.1).
   */
  clientOwner(docKey: string, client: number): string | null;
  /** Records a claim; the first claim of an id stands (a second one is ignored). */
  claimClient(docKey: string, client: number, linkId: string): void;
  /**
   * Moves updates that cannot be applied out of a document, atomically: they are kept aside
   * with the reason (for an operator to inspect; never loaded again) and the document's other
   * updates are replaced by `merged`, the state that does apply — as `compactDoc` replaces them:
   * exactly (SqliteStore), or merged with what other gateways appended meanwhile (PostgresStore).
   */
  setAsideUpdates(docKey: string, updates: Uint8Array[], reason: string, merged: Uint8Array, at: number): void;
  /** What was set aside for a document, oldest first. */
  listSetAside(docKey: string): SetAsideUpdate[];

  close(): void;
}
