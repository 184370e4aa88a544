/**
 * PostgresStore's worker, its whole program: one `pg` connection, one operation at a time, each reply posted on
 * the port and then signalled through the shared counter the gateway's thread waits on. Plain
 * CommonJS evaluated as a string, like WalCheckpointer's: synckit offers the same blocking call
 * but wants a worker file on disk and a TypeScript runner in it; an eval'd worker needs neither,
 * whatever runs the gateway (tsx, vitest, a build).
 */
export const postgresWorkerSource = `
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
  CREATE TABLE IF NOT EXISTS doc_clients (doc_key TEXT NOT NULL, client BIGINT NOT NULL, link_id TEXT NOT NULL, PRIMARY KEY (doc_key, client));
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
  deleteWorkspace: (db, id) =>
    transaction(db, 'SELECT 1', async () => {
      await db.query('DELETE FROM doc_updates WHERE left(doc_key, length($1)) = $1', [id + '/']);
      await db.query('DELETE FROM set_aside_updates WHERE left(doc_key, length($1)) = $1', [id + '/']);
      await db.query('DELETE FROM meta WHERE length(key) > length($1) AND right(key, length($1)) = $1', [':' + id]);
      await db.query('DELETE FROM links WHERE workspace_id = $1', [id]);
      await db.query('DELETE FROM workspaces WHERE id = $1', [id]);
    }),
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
  revokedLinks: async (db, ids) =>
    (await db.query({ name: 'revoked_links', text: 'SELECT id FROM links WHERE id = ANY($1::text[]) AND revoked_at IS NOT NULL', values: [ids] })).rows.map((row) => row.id),
  ping: (db) => run(db, 'SELECT 1'),
  appendUpdate: async (db, docKey, update) => {
    await append(db, docKey, update);
  },
  loadDoc: async (db, docKey) => {
    const updates = (await docRows(db, docKey)).rows.map((row) => ownCopy(row.data));
    return { updates, bytes: updates.reduce((sum, update) => sum + update.byteLength, 0) };
  },
  compactDoc: (db, docKey, merged) =>
    transaction(db, docLock(docKey), async () => replaceRows(db, docKey, (await docRows(db, docKey)).rows, merged)),
  deleteDoc: (db, docKey) =>
    transaction(db, docLock(docKey), async () => {
      await run(db, 'DELETE FROM doc_updates WHERE doc_key = $1', [docKey]);
      await run(db, 'DELETE FROM doc_clients WHERE doc_key = $1', [docKey]);
    }),
  clientOwner: async (db, docKey, client) =>
    (await db.query({ name: 'client_owner', text: 'SELECT link_id FROM doc_clients WHERE doc_key = $1 AND client = $2', values: [docKey, client] })).rows[0]?.link_id ?? null,
  claimClient: (db, docKey, client, linkId) =>
    run(db, 'INSERT INTO doc_clients (doc_key, client, link_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [docKey, client, linkId]),
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
