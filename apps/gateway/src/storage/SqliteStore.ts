import Database from 'better-sqlite3';
import type { LinkRecord, SetAsideUpdate, StoredDoc, Store, WorkspaceRecord } from '../core/ports/Store';
import { WalCheckpointer, type CheckpointResult } from './WalCheckpointer';

/** Commits between two checkpoint requests: ~800 WAL pages (an append writes ~3). */
const commitsPerCheckpoint = 256;
/**
 * While commits never pause, a PASSIVE checkpoint never catches up with the writer, and the
 * WAL only grows (SQLite restarts it only once every frame is in the database). Past this many
 * frames (~32 MB) the gateway runs a RESTART checkpoint itself: one stall of a few ms per 32 MB
 * instead of one per 4 MB.
 */
const maxWalFrames = 8192;
/** SQLite's own default, for when the checkpointer is gone. */
const autocheckpointPages = 1000;

interface LinkRow {
  id: string;
  workspace_id: string;
  role: LinkRecord['role'];
  token_hash: string;
  label: string;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
}

const toLink = (row: LinkRow): LinkRecord => ({
  id: row.id,
  workspaceId: row.workspace_id,
  role: row.role,
  tokenHash: row.token_hash,
  label: row.label,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  revokedAt: row.revoked_at,
});

const schema = `
  CREATE TABLE IF NOT EXISTS workspaces (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, created_at INTEGER NOT NULL
  );
  CREATE TABLE IF NOT EXISTS links (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    role TEXT NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
    token_hash TEXT NOT NULL UNIQUE,
    label TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER,
    revoked_at INTEGER
  );
  CREATE INDEX IF NOT EXISTS links_by_workspace ON links(workspace_id);
  CREATE TABLE IF NOT EXISTS doc_updates (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    doc_key TEXT NOT NULL,
    data BLOB NOT NULL
  );
  CREATE INDEX IF NOT EXISTS doc_updates_by_doc ON doc_updates(doc_key, seq);
  CREATE TABLE IF NOT EXISTS set_aside_updates (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    doc_key TEXT NOT NULL,
    data BLOB NOT NULL,
    reason TEXT NOT NULL,
    at INTEGER NOT NULL
  );
  CREATE INDEX IF NOT EXISTS set_aside_by_doc ON set_aside_updates(doc_key, seq);
  CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS doc_clients (
    doc_key TEXT NOT NULL, client INTEGER NOT NULL, link_id TEXT NOT NULL, PRIMARY KEY (doc_key, client)
  ) WITHOUT ROWID;
`;

/**
 * The default Store: one SQLite file in WAL mode. `synchronous = NORMAL` in WAL survives a
 * killed process (only an OS crash or power loss can drop the last commits), which is the
 * durability the gateway promises (docs/ARCHITECTURE.md §Durability).
 */
export class SqliteStore implements Store {
  private readonly db: Database.Database;
  private readonly statements;
  private readonly checkpointer: WalCheckpointer | null = null;
  private commitsSinceCheckpoint = 0;

  /** @param file a path, or ':memory:' for a private in-memory database. */
  constructor(file: string) {
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('foreign_keys = ON');
    this.db.exec(schema);
    if (file !== ':memory:') {
      this.db.pragma('wal_autocheckpoint = 0');
      this.checkpointer = new WalCheckpointer(file, this.onCheckpoint, (error) => {
        if (!this.db.open) return;
        console.warn(`flint: ${error.message}; SQLite checkpoints in the gateway's own thread again`);
        this.db.pragma(`wal_autocheckpoint = ${autocheckpointPages}`);
      });
    }
    const db = this.db;
    this.statements = {
      insertWorkspace: db.prepare('INSERT INTO workspaces (id, name, created_at) VALUES (?, ?, ?)'),
      getWorkspace: db.prepare('SELECT id, name, created_at AS createdAt FROM workspaces WHERE id = ?'),
      getMeta: db.prepare('SELECT value FROM meta WHERE key = ?'),
      setMeta: db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value'),
      insertLink: db.prepare(
        `INSERT INTO links (id, workspace_id, role, token_hash, label, created_at, expires_at, revoked_at)
         VALUES (@id, @workspaceId, @role, @tokenHash, @label, @createdAt, @expiresAt, @revokedAt)`,
      ),
      linkByHash: db.prepare('SELECT * FROM links WHERE token_hash = ?'),
      linkById: db.prepare('SELECT * FROM links WHERE id = ?'),
      linksByWorkspace: db.prepare('SELECT * FROM links WHERE workspace_id = ? ORDER BY created_at, id'),
      revokeLink: db.prepare('UPDATE links SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
      revokedLinks: db.prepare('SELECT id FROM links WHERE revoked_at IS NOT NULL AND id IN (SELECT value FROM json_each(?))'),
      appendUpdate: db.prepare('INSERT INTO doc_updates (doc_key, data) VALUES (?, ?)'),
      loadDoc: db.prepare('SELECT data FROM doc_updates WHERE doc_key = ? ORDER BY seq'),
      deleteDoc: db.prepare('DELETE FROM doc_updates WHERE doc_key = ?'),
      // substr, not LIKE: ids may hold "_", a LIKE wildcard.
      deleteWorkspaceDocs: db.prepare('DELETE FROM doc_updates WHERE substr(doc_key, 1, length(@p)) = @p'),
      deleteWorkspaceSetAside: db.prepare('DELETE FROM set_aside_updates WHERE substr(doc_key, 1, length(@p)) = @p'),
      deleteWorkspaceMeta: db.prepare('DELETE FROM meta WHERE length(key) > length(@p) AND substr(key, -length(@p)) = @p'),
      deleteWorkspaceLinks: db.prepare('DELETE FROM links WHERE workspace_id = ?'),
      deleteWorkspace: db.prepare('DELETE FROM workspaces WHERE id = ?'),
      setAside: db.prepare('INSERT INTO set_aside_updates (doc_key, data, reason, at) VALUES (?, ?, ?, ?)'),
      listSetAside: db.prepare('SELECT data, reason, at FROM set_aside_updates WHERE doc_key = ? ORDER BY seq'),
      clientOwner: db.prepare('SELECT link_id FROM doc_clients WHERE doc_key = ? AND client = ?').pluck(),
      claimClient: db.prepare('INSERT INTO doc_clients (doc_key, client, link_id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING'),
      deleteClaims: db.prepare('DELETE FROM doc_clients WHERE doc_key = ?'),
    };
  }

  createWorkspace(workspace: WorkspaceRecord): void {
    this.statements.insertWorkspace.run(workspace.id, workspace.name, workspace.createdAt);
  }

  getWorkspace(id: string): WorkspaceRecord | null {
    return (this.statements.getWorkspace.get(id) as WorkspaceRecord | undefined) ?? null;
  }

  getMeta(key: string): string | null {
    return (this.statements.getMeta.get(key) as { value: string } | undefined)?.value ?? null;
  }

  setMeta(key: string, value: string): void {
    this.statements.setMeta.run(key, value);
  }

  deleteWorkspace(id: string): void {
    const s = this.statements;
    this.db.transaction(() => {
      s.deleteWorkspaceDocs.run({ p: `${id}/` });
      s.deleteWorkspaceSetAside.run({ p: `${id}/` });
      s.deleteWorkspaceMeta.run({ p: `:${id}` });
      s.deleteWorkspaceLinks.run(id);
      s.deleteWorkspace.run(id);
    })();
    this.committed(commitsPerCheckpoint);
  }

  createLink(link: LinkRecord): void {
    this.statements.insertLink.run(link);
  }

  findLinkByTokenHash(tokenHash: string): LinkRecord | null {
    const row = this.statements.linkByHash.get(tokenHash) as LinkRow | undefined;
    return row ? toLink(row) : null;
  }

  getLink(id: string): LinkRecord | null {
    const row = this.statements.linkById.get(id) as LinkRow | undefined;
    return row ? toLink(row) : null;
  }

  listLinks(workspaceId: string): LinkRecord[] {
    return (this.statements.linksByWorkspace.all(workspaceId) as LinkRow[]).map(toLink);
  }

  revokeLink(id: string, revokedAt: number): void {
    this.statements.revokeLink.run(revokedAt, id);
  }

  revokedLinks(ids: readonly string[]): string[] {
    if (ids.length === 0) return [];
    return (this.statements.revokedLinks.all(JSON.stringify(ids)) as Array<{ id: string }>).map((row) => row.id);
  }

  appendUpdate(docKey: string, update: Uint8Array): void {
    this.statements.appendUpdate.run(docKey, update);
    this.committed();
  }

  loadDoc(docKey: string): StoredDoc {
    const rows = this.statements.loadDoc.all(docKey) as { data: Buffer }[];
    let bytes = 0;
    const updates = rows.map((row) => {
      bytes += row.data.byteLength;
      return new Uint8Array(row.data.buffer, row.data.byteOffset, row.data.byteLength);
    });
    return { updates, bytes };
  }

  compactDoc(docKey: string, merged: Uint8Array): void {
    this.db.transaction(() => {
      this.statements.deleteDoc.run(docKey);
      this.statements.appendUpdate.run(docKey, merged);
    })();
    // A merged document is many pages at once.
    this.committed(commitsPerCheckpoint);
  }

  deleteDoc(docKey: string): void {
    this.db.transaction(() => {
      this.statements.deleteDoc.run(docKey);
      this.statements.deleteClaims.run(docKey);
    })();
  }

  clientOwner(docKey: string, client: number): string | null {
    return (this.statements.clientOwner.get(docKey, client) as string | undefined) ?? null;
  }

  claimClient(docKey: string, client: number, linkId: string): void {
    this.statements.claimClient.run(docKey, client, linkId);
    this.committed(1);
  }

  setAsideUpdates(docKey: string, updates: Uint8Array[], reason: string, merged: Uint8Array, at: number): void {
    this.db.transaction(() => {
      for (const update of updates) this.statements.setAside.run(docKey, update, reason, at);
      this.statements.deleteDoc.run(docKey);
      this.statements.appendUpdate.run(docKey, merged);
    })();
    this.committed(commitsPerCheckpoint);
  }

  listSetAside(docKey: string): SetAsideUpdate[] {
    const rows = this.statements.listSetAside.all(docKey) as { data: Buffer; reason: string; at: number }[];
    return rows.map((row) => ({ data: new Uint8Array(row.data), reason: row.reason, at: row.at }));
  }

  close(): void {
    this.checkpointer?.close();
    this.db.close();
  }

  /** Document writes are what fills the WAL; links and workspaces are too rare to count. */
  private committed(weight = 1): void {
    if (!this.checkpointer) return;
    this.commitsSinceCheckpoint += weight;
    if (this.commitsSinceCheckpoint >= commitsPerCheckpoint && this.checkpointer.request()) this.commitsSinceCheckpoint = 0;
  }

  private readonly onCheckpoint = (result: CheckpointResult): void => {
    if (this.db.open && result.logFrames >= maxWalFrames) this.db.pragma('wal_checkpoint(RESTART)');
  };
}
