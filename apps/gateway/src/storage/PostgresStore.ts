import { createRequire } from 'node:module';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { StoreError, type LinkRecord, type SetAsideUpdate, type StoredDoc, type Store, type WorkspaceRecord } from './Store';

/**
 * The worker's whole program: one `pg` connection, one operation at a time, each reply posted on
 * the port and then signalled through the shared counter the gateway's thread waits on. Plain
 * CommonJS evaluated as a string, like WalCheckpointer's: synckit offers the same blocking call
 * but wants a worker file on disk and a TypeScript runner in it; an eval'd worker needs neither,
 * whatever runs the gateway (tsx, vitest, a build).
 */
const workerSource = `
const { workerData } = require('node:worker_threads');
const { Client } = require(workerData.pg);
const Y = require(workerData.yjs);
const { port, url, timeoutMs } = workerData;
const replies = new Int32Array(workerData.replies);

// Two int4 keys: a lock space apart from the documents' one-bigint keys.
const schemaLock = 'SELECT pg_advisory_xact_lock(2002, 1)';
const schema = \`
  CREATE TABLE IF NOT EXISTS workspaces (id TEXT PRIMARY KEY, name TEXT NOT NULL, created_at BIGINT NOT NULL);
  CREATE TABLE IF NOT EXISTS links (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id),
    role TEXT NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
    token_hash TEXT NOT NULL UNIQUE,
    label TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT,
    revoked_at BIGINT
  );
  CREATE INDEX IF NOT EXISTS links_by_workspace ON links(workspace_id);
  CREATE TABLE IF NOT EXISTS doc_updates (seq BIGSERIAL PRIMARY KEY, doc_key TEXT NOT NULL, data BYTEA NOT NULL);
  CREATE INDEX IF NOT EXISTS doc_updates_by_doc ON doc_updates(doc_key, seq);
  CREATE TABLE IF NOT EXISTS set_aside_updates (
    seq BIGSERIAL PRIMARY KEY, doc_key TEXT NOT NULL, data BYTEA NOT NULL, reason TEXT NOT NULL, at BIGINT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS set_aside_by_doc ON set_aside_updates(doc_key, seq);
  CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
\`;

let client = null;
async function connection() {
  if (client) return client;
  const next = new Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  // A dropped connection fails the query in flight, whose caller hears of it; the next call reconnects.
  next.on('error', () => { if (client === next) client = null; });
  await next.connect();
  // A commit returns before PostgreSQL flushes its WAL (see PostgresStore's comment).
  await next.query('SET synchronous_commit = off');
  client = next;
  return next;
}

/** Closes a connection that cannot be trusted any more; the next call opens a new one. */
function drop(db) {
  if (client === db) client = null;
  db.end().catch(() => {}); // ending a broken connection can fail too: it is gone either way
}

// pg's small Buffers are views of a shared 8 KB slab, which the port would copy whole: copy each alone.
const ownCopy = (data) => new Uint8Array(data);
const toLink = (row) => ({
  id: row.id, workspaceId: row.workspace_id, role: row.role, tokenHash: row.token_hash, label: row.label,
  createdAt: Number(row.created_at),
  expiresAt: row.expires_at === null ? null : Number(row.expires_at),
  revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
});

async function transaction(db, lock, body) {
  await db.query('BEGIN');
  try {
    await db.query(lock);
    const result = await body();
    await db.query('COMMIT');
    return result;
  } catch (error) {
    // If even ROLLBACK fails, the connection is in no state to trust.
    await db.query('ROLLBACK').catch(() => drop(db));
    throw error;
  }
}

const docLock = (docKey) => ({ name: 'doc_lock', text: 'SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', values: [docKey] });
/** A statement whose result the caller has no use for (and pg's Result cannot cross the port). */
const run = async (db, text, values) => {
  await db.query(text, values);
};
const append = (db, docKey, data) =>
  db.query({ name: 'append', text: 'INSERT INTO doc_updates (doc_key, data) VALUES ($1, $2)', values: [docKey, data] });
const deleteRows = (db, rows) =>
  db.query({ name: 'delete_rows', text: 'DELETE FROM doc_updates WHERE seq = ANY($1::bigint[])', values: [rows.map((row) => row.seq)] });
const docRows = (db, docKey) =>
  db.query({ name: 'doc_rows', text: 'SELECT seq, data FROM doc_updates WHERE doc_key = $1 ORDER BY seq', values: [docKey] });

/**
 * Replaces the rows read by one update holding both them and the caller's state: another gateway
 * may have appended what the caller never saw. Rows are deleted by seq, not "seq <= the last one
 * read": a row with a lower seq can commit after the read, and it was not merged.
 */
async function replaceRows(db, docKey, rows, merged) {
  let state = merged;
  let folded = rows;
  try {
    state = Y.mergeUpdates([merged, ...rows.map((row) => row.data)]);
  } catch {
    // One row is not a Yjs update: merge the others, leave it for the next load to set aside.
    folded = [];
    for (const row of rows) {
      try {
        state = Y.mergeUpdates([state, row.data]);
        folded.push(row);
      } catch {
        continue; // this row stays as it is
      }
    }
  }
  await deleteRows(db, folded);
  await append(db, docKey, state);
}

const ops = {
  open: (db) => transaction(db, schemaLock, () => run(db, schema)),
  close: async () => {
    const open = client;
    client = null;
    if (open) await open.end();
  },
  createWorkspace: (db, w) => run(db, 'INSERT INTO workspaces (id, name, created_at) VALUES ($1, $2, $3)', [w.id, w.name, w.createdAt]),
  getWorkspace: async (db, id) => {
    const { rows } = await db.query('SELECT id, name, created_at FROM workspaces WHERE id = $1', [id]);
    return rows[0] ? { id: rows[0].id, name: rows[0].name, createdAt: Number(rows[0].created_at) } : null;
  },
  getMeta: async (db, key) => (await db.query('SELECT value FROM meta WHERE key = $1', [key])).rows[0]?.value ?? null,
  setMeta: (db, key, value) =>
    run(db, 'INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [key, value]),
  createLink: (db, l) =>
    run(
      db,
      'INSERT INTO links (id, workspace_id, role, token_hash, label, created_at, expires_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
      [l.id, l.workspaceId, l.role, l.tokenHash, l.label, l.createdAt, l.expiresAt, l.revokedAt],
    ),
  findLinkByTokenHash: async (db, hash) => (await db.query('SELECT * FROM links WHERE token_hash = $1', [hash])).rows.map(toLink)[0] ?? null,
  getLink: async (db, id) => (await db.query('SELECT * FROM links WHERE id = $1', [id])).rows.map(toLink)[0] ?? null,
  listLinks: async (db, workspaceId) =>
    (await db.query('SELECT * FROM links WHERE workspace_id = $1 ORDER BY created_at, id', [workspaceId])).rows.map(toLink),
  revokeLink: (db, id, at) => run(db, 'UPDATE links SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [at, id]),
  appendUpdate: async (db, docKey, update) => {
    await append(db, docKey, update);
  },
  loadDoc: async (db, docKey) => {
    const updates = (await docRows(db, docKey)).rows.map((row) => ownCopy(row.data));
    return { updates, bytes: updates.reduce((sum, update) => sum + update.byteLength, 0) };
  },
  compactDoc: (db, docKey, merged) =>
    transaction(db, docLock(docKey), async () => replaceRows(db, docKey, (await docRows(db, docKey)).rows, merged)),
  deleteDoc: (db, docKey) => transaction(db, docLock(docKey), () => run(db, 'DELETE FROM doc_updates WHERE doc_key = $1', [docKey])),
  setAsideUpdates: (db, docKey, updates, reason, merged, at) =>
    transaction(db, docLock(docKey), async () => {
      for (const update of updates) {
        await db.query('INSERT INTO set_aside_updates (doc_key, data, reason, at) VALUES ($1, $2, $3, $4)', [docKey, update, reason, at]);
      }
      const { rows } = await docRows(db, docKey);
      const isSetAside = (row) => updates.some((update) => Buffer.compare(update, row.data) === 0);
      await deleteRows(db, rows.filter(isSetAside));
      await replaceRows(db, docKey, rows.filter((row) => !isSetAside(row)), merged);
    }),
  listSetAside: async (db, docKey) =>
    (await db.query('SELECT data, reason, at FROM set_aside_updates WHERE doc_key = $1 ORDER BY seq', [docKey])).rows.map((row) => ({
      data: ownCopy(row.data), reason: row.reason, at: Number(row.at),
    })),
};

/**
 * A call that outlives its timeout takes its connection with it (end() destroys the socket of a
 * busy client): a stuck query would otherwise hold up every call queued behind it for good.
 */
function abandonAfterTimeout() {
  // The query it ran then fails with its own error, which its caller hears.
  return setTimeout(() => client && drop(client), timeoutMs);
}

async function answer({ id, op, args }) {
  let reply;
  const timer = abandonAfterTimeout();
  try {
    const value = await ops[op](op === 'close' ? null : await connection(), ...args);
    reply = { id, ok: true, value };
  } catch (error) {
    reply = { id, ok: false, message: error instanceof Error ? error.message : String(error), code: error?.code };
  } finally {
    clearTimeout(timer);
  }
  try {
    port.postMessage(reply);
  } catch (error) {
    // A value that cannot cross the port is a bug here: say so now rather than let the caller time out.
    port.postMessage({ id, ok: false, message: 'its reply could not cross to the gateway: ' + error.message });
  }
  Atomics.add(replies, 0, 1);
  Atomics.notify(replies, 0);
}

function post(reply) {
  port.postMessage(reply);
  Atomics.add(replies, 0, 1);
  Atomics.notify(replies, 0);
}

/** Appends that arrived one after another go in one statement and one commit; each gets its reply. */
async function appendBatch(messages) {
  const timer = abandonAfterTimeout();
  try {
    const db = await connection();
    await db.query({
      name: 'append_batch',
      text: 'INSERT INTO doc_updates (doc_key, data) SELECT u.doc_key, u.data FROM unnest($1::text[], $2::bytea[]) WITH ORDINALITY AS u(doc_key, data, n) ORDER BY u.n',
      values: [messages.map((m) => m.args[0]), messages.map((m) => Buffer.from(m.args[1].buffer, m.args[1].byteOffset, m.args[1].byteLength))],
    });
    for (const m of messages) post({ id: m.id, ok: true, value: undefined });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    for (const m of messages) post({ id: m.id, ok: false, message, code: error?.code });
  } finally {
    clearTimeout(timer);
  }
}

// One operation at a time: a transaction's statements must not interleave with another call's
// (which happens only after a call timed out and the gateway moved on). Appends posted back to
// back (the gateway does not wait for them) join one batch, in order, before the next call.
let queue = Promise.resolve();
let batch = null;
port.on('message', (message) => {
  if (message.op === 'appendUpdate') {
    if (batch) return void batch.push(message);
    const current = [message];
    batch = current;
    queue = queue.then(() => {
      if (batch === current) batch = null;
      return appendBatch(current);
    });
    return;
  }
  batch = null;
  queue = queue.then(() => answer(message));
});
`;

/** A reply from the worker: the operation's value, or why it failed (with PostgreSQL's SQLSTATE). */
type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; message: string; code?: string };

export interface PostgresStoreOptions {
  /** How long one call may wait for PostgreSQL before it throws. */
  timeoutMs?: number;
}

/**
 * Why a PostgresStore call failed: `timeout` (no answer in time: the server is unreachable or
 * stuck, and a write may still land), `failed` (PostgreSQL refused it or the connection failed;
 * `code` is PostgreSQL's SQLSTATE, or the system's, e.g. ECONNREFUSED), or `closed`.
 */
export class PostgresStoreError extends StoreError {
  constructor(
    readonly op: string,
    readonly reason: 'timeout' | 'failed' | 'closed',
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'PostgresStoreError';
  }
}

/**
 * A Store in PostgreSQL, for several gateways sharing one database (`FLINT_DATABASE_URL`). A `pg`
 * client runs in a worker thread. Reads and the rare writes keep Store's synchronous interface
 * (docs/decisions/0002-synchronous-store.md): the calling thread blocks on each call (Atomics.wait
 * on a shared counter) until the worker's reply is on the port, or the timeout passes. Document
 * appends, the hot path, do not block: they resolve once stored (decision 0024).
 *
 * Commits use `synchronous_commit = off`: a commit returns before PostgreSQL flushes its WAL, so
 * what returned survives a killed gateway (like SQLite's `synchronous = NORMAL`), but a crash or
 * power loss of the database host can drop the last fraction of a second of commits.
 *
 * Compaction merges rather than replaces (see `compactDoc` in Store.ts): each gateway compacts
 * with its own state, and another may have appended updates it has not received.
 */
export class PostgresStore implements Store {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  /** How many replies the worker has posted; the calling thread sleeps until it moves. */
  private readonly replies: Int32Array;
  private readonly timeoutMs: number;
  private readonly where: string;
  private lastId = 0;
  /** Appends posted and not answered yet, by id. */
  private readonly pending = new Map<number, { op: string; resolve(): void; reject(error: Error): void }>();
  private closed = false;
  private workerFailure: Error | null = null;

  /** Connects, and creates the schema if the database has none. Throws if PostgreSQL does not answer. */
  constructor(connectionString: string, { timeoutMs = 10_000 }: PostgresStoreOptions = {}) {
    this.timeoutMs = timeoutMs;
    this.where = serverAddress(connectionString);
    const resolve = createRequire(import.meta.url).resolve;
    const { port1, port2 } = new MessageChannel();
    const replies = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT);
    this.port = port1;
    this.replies = new Int32Array(replies);
    this.worker = new Worker(workerSource, {
      eval: true,
      // Nothing from the gateway's command line: under `node --input-type=module` this CommonJS
      // program would be read as an ES module, have no require, and die unheard (this thread is blocked).
      execArgv: [],
      workerData: { port: port2, replies, url: connectionString, timeoutMs, pg: resolve('pg'), yjs: resolve('yjs') },
      transferList: [port2],
    });
    // Replies to appends arrive here while the thread is free (a blocking call takes them on its way).
    this.port.on('message', (reply: Reply) => this.settle(reply));
    this.port.unref();
    // Heard only between calls (the thread is blocked during one): the next call fails at once.
    this.worker.on('error', (error) => (this.workerFailure = error));
    this.worker.on('exit', (code) => (this.workerFailure ??= new Error(`the PostgreSQL worker exited (${code})`)));
    // The gateway decides when the process exits. (After the listeners: adding one refs the worker again.)
    this.worker.unref();
    try {
      this.call('open', []);
    } catch (error) {
      this.shutDown();
      throw error;
    }
  }

  createWorkspace(workspace: WorkspaceRecord): void {
    this.call('createWorkspace', [workspace]);
  }

  getWorkspace(id: string): WorkspaceRecord | null {
    return this.call('getWorkspace', [id]) as WorkspaceRecord | null;
  }

  getMeta(key: string): string | null {
    return this.call('getMeta', [key]) as string | null;
  }

  setMeta(key: string, value: string): void {
    this.call('setMeta', [key, value]);
  }

  createLink(link: LinkRecord): void {
    this.call('createLink', [link]);
  }

  findLinkByTokenHash(tokenHash: string): LinkRecord | null {
    return this.call('findLinkByTokenHash', [tokenHash]) as LinkRecord | null;
  }

  getLink(id: string): LinkRecord | null {
    return this.call('getLink', [id]) as LinkRecord | null;
  }

  listLinks(workspaceId: string): LinkRecord[] {
    return this.call('listLinks', [workspaceId]) as LinkRecord[];
  }

  revokeLink(id: string, revokedAt: number): void {
    this.call('revokeLink', [id, revokedAt]);
  }

  /**
   * Does not wait: the update is stored when the promise resolves (appends posted back to back
   * share one statement and one commit). Calls after it see it: the worker answers in order.
   */
  appendUpdate(docKey: string, update: Uint8Array): Promise<void> {
    const op = 'appendUpdate';
    const failure = this.unusable(op);
    if (failure) return Promise.reject(failure);
    const id = ++this.lastId;
    this.port.postMessage({ id, op, args: [docKey, ownBuffer(update)] });
    return new Promise((resolve, reject) => this.pending.set(id, { op, resolve: () => resolve(), reject }));
  }

  loadDoc(docKey: string): StoredDoc {
    return this.call('loadDoc', [docKey]) as StoredDoc;
  }

  compactDoc(docKey: string, merged: Uint8Array): void {
    this.call('compactDoc', [docKey, ownBuffer(merged)]);
  }

  deleteDoc(docKey: string): void {
    this.call('deleteDoc', [docKey]);
  }

  setAsideUpdates(docKey: string, updates: Uint8Array[], reason: string, merged: Uint8Array, at: number): void {
    this.call('setAsideUpdates', [docKey, updates.map(ownBuffer), reason, ownBuffer(merged), at]);
  }

  listSetAside(docKey: string): SetAsideUpdate[] {
    return this.call('listSetAside', [docKey]) as SetAsideUpdate[];
  }

  /** Ends the connection, then the worker (which goes even if PostgreSQL does not answer). */
  close(): void {
    if (this.closed) return;
    try {
      this.call('close', []);
    } finally {
      this.shutDown();
    }
  }

  private shutDown(): void {
    this.closed = true;
    for (const [id, waiting] of this.pending) {
      this.pending.delete(id);
      waiting.reject(new PostgresStoreError(waiting.op, 'closed', `PostgresStore.${waiting.op}: the store closed before it answered`));
    }
    this.port.close();
    void this.worker.terminate();
  }

  private unusable(op: string): PostgresStoreError | null {
    if (this.closed) return new PostgresStoreError(op, 'closed', `PostgresStore.${op}: the store is closed`);
    if (this.workerFailure) {
      return new PostgresStoreError(op, 'failed', `PostgresStore.${op} failed: ${this.workerFailure.message}; open the store again`);
    }
    return null;
  }

  /** Settles the append a reply answers; false when no append waits for it. */
  private settle(reply: Reply): boolean {
    const waiting = this.pending.get(reply.id);
    if (!waiting) return false;
    this.pending.delete(reply.id);
    if (reply.ok) waiting.resolve();
    else waiting.reject(new PostgresStoreError(waiting.op, 'failed', `PostgresStore.${waiting.op} failed: ${reply.message} (PostgreSQL at ${this.where})`, reply.code));
    return true;
  }

  private call(op: string, args: unknown[]): unknown {
    const failure = this.unusable(op);
    if (failure) throw failure;
    const id = ++this.lastId;
    this.port.postMessage({ id, op, args });
    const deadline = performance.now() + this.timeoutMs;
    for (;;) {
      // Read before looking at the port: a reply posted after the look moves the counter, so the wait returns at once.
      const seen = Atomics.load(this.replies, 0);
      const received = receiveMessageOnPort(this.port);
      if (received) {
        const reply = received.message as Reply;
        if (reply.id !== id) {
          this.settle(reply); // an append's (or the late reply to a call that timed out)
          continue;
        }
        if (reply.ok) return reply.value;
        throw new PostgresStoreError(op, 'failed', `PostgresStore.${op} failed: ${reply.message} (PostgreSQL at ${this.where})`, reply.code);
      }
      const leftMs = deadline - performance.now();
      if (leftMs <= 0) {
        throw new PostgresStoreError(
          op,
          'timeout',
          `PostgresStore.${op}: no answer from PostgreSQL at ${this.where} within ${this.timeoutMs} ms; check that the server is up and reachable`,
        );
      }
      Atomics.wait(this.replies, 0, seen, leftMs);
    }
  }
}

/** Structured cloning copies a view's whole buffer: an update read out of a larger frame is copied alone. */
function ownBuffer(data: Uint8Array): Uint8Array {
  return data.byteOffset === 0 && data.byteLength === data.buffer.byteLength ? data : data.slice();
}

/** host:port/database, for messages: never the password a connection string may hold. */
function serverAddress(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    return `${url.host}${url.pathname}`;
  } catch {
    return 'the configured address'; // a keyword/value connection string: not a URL, and it may hold a password
  }
}
