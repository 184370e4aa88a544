import { createRequire } from 'node:module';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { postgresWorkerSource } from './postgresWorker';
import { StoreError, type LinkRecord, type SetAsideUpdate, type StoredDoc, type Store, type WorkspaceRecord } from '../core/ports/Store';

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
  /** Appends and other calls that do not block, posted and not answered yet, by id. */
  private readonly pending = new Map<number, { op: string; resolve(value: unknown): void; reject(error: Error): void }>();
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
    this.worker = new Worker(postgresWorkerSource, {
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

  deleteWorkspace(id: string): void {
    this.call('deleteWorkspace', [id]);
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

  /** Does not block: the gateway asks in the background (see Store). */
  revokedLinks(ids: readonly string[]): Promise<string[]> {
    return this.callLater('revokedLinks', [[...ids]]) as Promise<string[]>;
  }

  /**
   * Resolves once PostgreSQL answers a trivial query, after every call posted before it: what
   * `/readyz` asks (a stalled append queue or server shows as a ping that does not come back).
   */
  async ping(): Promise<void> {
    await this.callLater('ping', []);
  }

  /**
   * Does not wait: the update is stored when the promise resolves (appends posted back to back
   * share one statement and one commit). Calls after it see it: the worker answers in order.
   */
  appendUpdate(docKey: string, update: Uint8Array): Promise<void> {
    return this.callLater('appendUpdate', [docKey, ownBuffer(update)]) as Promise<void>;
  }

  /** A call that does not block the thread: its reply settles the promise. */
  private callLater(op: string, args: unknown[]): Promise<unknown> {
    const failure = this.unusable(op);
    if (failure) return Promise.reject(failure);
    const id = ++this.lastId;
    this.port.postMessage({ id, op, args });
    return new Promise((resolve, reject) => this.pending.set(id, { op, resolve, reject }));
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

  clientOwner(docKey: string, client: number): string | null {
    return this.call('clientOwner', [docKey, client]) as string | null;
  }

  claimClient(docKey: string, client: number, linkId: string): void {
    this.call('claimClient', [docKey, client, linkId]);
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
    if (reply.ok) waiting.resolve(reply.value);
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
