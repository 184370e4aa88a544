import { Channel, INDEX_DOC_ID, startDocFrame, THREAD_DOC_ID } from '@flint/protocol';
import * as encoding from 'lib0/encoding';
import * as syncProtocol from 'y-protocols/sync';
import * as Y from 'yjs';
import { AwarenessRelay, writeAwarenessUpdate, type AwarenessEntry } from './AwarenessRelay';
import { checkTrialOrder, checkUpdate, FILE_DOC_PARTICIPANT_SCHEMA, FILE_DOC_SCHEMA, INDEX_DOC_SCHEMA, type DocSchema, type UpdateCheck } from './checkUpdate';
import type { Clock, TimerHandle } from './ports/Clock';
import type { WorkspaceMessage } from './ports/ClusterBus';
import type { GatewayConfig } from './GatewayConfig';
import type { Log } from './ports/Log';
import type { Metrics } from './Metrics';
import type { Random } from './ports/Random';
import type { Store } from './ports/Store';
import type { RoomSession, Subscriber } from './Subscriber';

/** The origin of changes the gateway makes itself (file tree operations, seeding). */
export const GATEWAY_ORIGIN = Symbol('gateway');
/** The origin of changes another gateway accepted, stored and published (decision 0024). */
export const CLUSTER_ORIGIN = Symbol('cluster');

/** How a room and its docs tell the other gateways of a cluster what changed here. */
export interface DocCluster {
  /** This gateway's id (unique per process). */
  readonly gatewayId: string;
  /** Whether other gateways may exist (false: nothing is ever relayed here). */
  readonly clustered: boolean;
  /** Whether the gateway with this id runs now (this one, or one heard from recently). */
  isAlive(gatewayId: string): boolean;
  /** Tells the other gateways following a workspace (a turn's status, a Stop for a turn they run). */
  publish(workspaceId: string, message: WorkspaceMessage): void;
  /** A doc was loaded from the store: other gateways holding it send what it lacks, and their cursors. */
  loaded(live: LiveDoc): void;
  /** A change accepted by this gateway, stored already. */
  stored(live: LiveDoc, update: Uint8Array): void;
  /** Cursors and presence set by this gateway's sessions or its agent. */
  awarenessChanged(live: LiveDoc, entries: AwarenessEntry[]): void;
}

/** What a live doc needs of the gateway. */
export interface DocContext {
  readonly store: Store;
  readonly config: GatewayConfig;
  readonly metrics: Metrics;
  readonly clock: Clock;
  readonly random: Random;
  readonly log: Log;
  readonly cluster: DocCluster;
  /** The store refused a change of `live` (its database is down): the room must go (RoomRegistry). */
  storeFailed(live: LiveDoc, error: unknown): void;
}

/** The first retry of a failed compaction, doubling up to the last. */
const compactionRetryFirstMs = 1_000;
const compactionRetryMaxMs = 60_000;

/** Yjs throws on bytes that are not updates; such a store is read update by update instead. */
function mergeOrNull(updates: Uint8Array[]): Uint8Array | null {
  try {
    return updates.length === 1 ? updates[0]! : Y.mergeUpdates(updates);
  } catch {
    return null; // the slow path names the update that does not decode
  }
}

/**
 * One loaded document of a room: its Y.Doc, its awareness and the sessions subscribed to it.
 * Every change is appended to the store before it is broadcast, so nothing a client saw can be
 * lost by a crash (DESIGN §8).
 */
export class LiveDoc {
  /** Named by its key: an unnamed Y.Doc draws a random UUID, 31 calls to the system's RNG (most of creating a file). */
  readonly doc: Y.Doc;
  readonly awareness = new AwarenessRelay();
  readonly subscribers = new Set<RoomSession>();
  /** In-process readers of every awareness change relayed here (a recording, issue 37). */
  readonly awarenessWatchers = new Set<(entries: readonly AwarenessEntry[]) => void>();
  /** The last append still on its way to a store that answers later; null when all are stored. */
  private storing: Promise<void> | null = null;
  /** The store refused an update: this doc holds a change it does not, and is about to be dropped. */
  private storeFailed = false;
  /** Bytes of the stored updates: an upper bound of the encoded document, cheap to keep. */
  storedBytes: number;
  private updatesSinceCompaction: number;
  /**
   * Yjs client ids a tab showed as its own (its cursor in this doc) and wrote with: the link it
   * belongs to. Another link writing under such an id would take over that person's next clocks,
   * and Yjs would drop that person's own edits with them (offline work, lost from the store).
   * Stored, so a claim outlives this doc's unload, a restart, and holds on every gateway; this
   * map holds the claims read or made here.
   */
  private readonly claims = new Map<number, string>();
  /** A failed compaction waits to be retried. */
  private compaction: 'idle' | { retry: TimerHandle } = 'idle';
  private destroyed = false;

  private readonly docKey: string;
  /** Nothing was stored for this doc when it loaded: it is new (a folder project fills it from its file). */
  readonly fresh: boolean;

  constructor(
    readonly workspaceId: string,
    readonly docId: string,
    private readonly ctx: DocContext,
  ) {
    this.docKey = `${workspaceId}/${docId}`;
    this.doc = new Y.Doc({ guid: this.docKey });
    const stored = ctx.store.loadDoc(this.docKey);
    this.storedBytes = stored.bytes;
    this.fresh = stored.updates.length === 0;
    this.updatesSinceCompaction = stored.updates.length;
    if (stored.updates.length > 0) this.load(stored.updates);
    this.doc.on('update', this.onUpdate);
  }

  /**
   * Null for the agent thread: only the gateway writes it (clients' writes close their socket),
   * and it nests types (a Y.Text per message) that the participant schemas do not allow.
   */
  private get schema(): DocSchema | null {
    if (this.docId === THREAD_DOC_ID) return null;
    return this.docId === INDEX_DOC_ID ? INDEX_DOC_SCHEMA : FILE_DOC_SCHEMA;
  }

  /**
   * Applies the stored updates. They were checked when they arrived, but a store written by an
   * older gateway may hold one that does not apply: the document is then rebuilt from the
   * updates that do, and the others are set aside (kept, logged, counted) — never a document
   * that cannot be opened.
   */
  private load(updates: Uint8Array[]): void {
    const merged = mergeOrNull(updates);
    const schema = this.schema;
    if (schema === null && merged) {
      Y.applyUpdate(this.doc, merged);
      return;
    }
    if (merged && checkUpdate(this.doc, merged, schema ?? FILE_DOC_SCHEMA).ok) {
      Y.applyUpdate(this.doc, merged);
      return;
    }
    const setAside = new Map<Uint8Array, string>();
    let waiting = updates;
    // An update may depend on a later one (Yjs kept such updates pending): retry until no progress.
    for (let progress = true; progress && waiting.length > 0; ) {
      progress = false;
      const next: Uint8Array[] = [];
      for (const update of waiting) {
        const check = checkUpdate(this.doc, update, schema ?? FILE_DOC_SCHEMA);
        if (check.ok) {
          Y.applyUpdate(this.doc, update);
          progress = true;
        } else if (check.kind === 'incomplete') next.push(update);
        else setAside.set(update, check.reason);
      }
      waiting = next;
    }
    for (const update of waiting) setAside.set(update, 'it depends on changes the document never received');
    if (setAside.size === 0) return;
    const { store, metrics, clock, log } = this.ctx;
    const reasons = [...new Set(setAside.values())].join('; ');
    const state = Y.encodeStateAsUpdate(this.doc);
    store.setAsideUpdates(this.docKey, [...setAside.keys()], reasons, state, clock.now());
    this.storedBytes = state.byteLength;
    this.updatesSinceCompaction = 1;
    metrics.inc('flint_updates_set_aside_total', undefined, setAside.size);
    log('warn', 'set aside stored updates that do not apply', { docKey: this.docKey, count: setAside.size, reasons });
  }

  /**
   * Applies a participant's update only if all of it can be applied (`checkUpdate`): Yjs's
   * `applyUpdate` is not atomic, and what it keeps pending would live in the document for good.
   */
  accept(update: Uint8Array, origin: unknown): UpdateCheck {
    if (this.schema === null) return { ok: false, kind: 'invalid', reason: 'only the gateway writes this document' };
    const schema = this.schema === FILE_DOC_SCHEMA ? FILE_DOC_PARTICIPANT_SCHEMA : this.schema;
    const check = checkUpdate(this.doc, update, schema);
    if (!check.ok) return check;
    const linkId = (origin as Partial<Subscriber> | null)?.linkId;
    for (const client of check.writers ?? []) {
      const claimed = this.claimOf(client);
      if (claimed !== null && claimed !== linkId) return { ok: false, kind: 'foreign', reason: `it writes as client ${client}, another participant's` };
    }
    if (check.trial.length > 0) {
      // Items whose neighbours come in the same update (a catch-up after being offline): only
      // integrating them shows where they land, so that happens first on a copy.
      const trial = new Y.Doc({ gc: false });
      try {
        Y.applyUpdate(trial, Y.encodeStateAsUpdate(this.doc));
        Y.applyUpdate(trial, update);
        const order = checkTrialOrder(trial, check.trial);
        if (!order.ok) return order;
      } finally {
        trial.destroy();
      }
    }
    Y.applyUpdate(this.doc, update, origin);
    if (linkId !== undefined) {
      for (const client of check.writers ?? []) {
        if (this.claims.has(client) || this.awareness.ownerOf(client) !== origin) continue;
        this.ctx.store.claimClient(this.docKey, client, linkId);
        this.claims.set(client, linkId);
      }
    }
    const store = this.doc.store;
    if (store.pendingStructs !== null || store.pendingDs !== null) {
      // checkUpdate let through something Yjs could not integrate: keep the document clean.
      store.pendingStructs = null;
      store.pendingDs = null;
      this.ctx.metrics.inc('flint_updates_left_pending_total');
      this.ctx.log('error', 'an accepted update left structs pending; dropped them', { docKey: this.docKey });
    }
    return check;
  }

  /** The link that claimed a client id, read from the store once; null while unclaimed (asked again). */
  private claimOf(client: number): string | null {
    const known = this.claims.get(client);
    if (known !== undefined) return known;
    const stored = this.ctx.store.clientOwner(this.docKey, client);
    if (stored !== null) this.claims.set(client, stored);
    return stored;
  }

  /**
   * Stored, then sent to this gateway's sessions, then published to the other gateways. A store
   * that answers later (PostgreSQL) lets this gateway's sessions see the change first — they hold
   * it, and resend it if this gateway dies — but the other gateways hear of it only once it is
   * stored. A change another gateway published is stored already (by it): it is only sent on.
   */
  private readonly onUpdate = (update: Uint8Array, origin: unknown, _doc: Y.Doc, transaction: Y.Transaction): void => {
    try {
      this.handleUpdate(update, origin, transaction);
    } catch (error) {
      // Nothing may throw inside a Yjs observer (the doc would stop emitting). Whatever failed,
      // some subscriber or gateway may lack this change: drop the room, and every tab's sync
      // puts it back together from the store and what the tabs hold.
      this.ctx.log('error', 'handling a document update failed; dropping the room', { docKey: this.docKey, error: String(error) });
      this.failStore(error);
    }
  };

  private handleUpdate(update: Uint8Array, origin: unknown, transaction: Y.Transaction): void {
    const local = origin !== CLUSTER_ORIGIN;
    if (this.storeFailed) return;
    let stored: void | Promise<void> = undefined;
    if (local) {
      try {
        stored = this.ctx.store.appendUpdate(this.docKey, update);
      } catch (error) {
        // Not stored, so shown to no one: the room is dropped and its tabs send it again.
        return this.failStore(error);
      }
    }
    this.storedBytes += update.byteLength;
    this.ctx.metrics.inc('flint_doc_updates_total');
    const encoder = startDocFrame(Channel.Sync, this.docId);
    syncProtocol.writeUpdate(encoder, update);
    const frame = encoding.toUint8Array(encoder);
    for (const subscriber of this.subscribers) {
      if (subscriber !== origin) subscriber.sendUpdate(this, frame, transaction.beforeState);
    }
    if (!local) return;
    if (stored) {
      this.storing = stored;
      const settled = () => void (this.storing === stored && (this.storing = null));
      stored.then(
        () => (settled(), this.ctx.cluster.stored(this, update)),
        (error: unknown) => (settled(), this.failStore(error)),
      );
    } else this.ctx.cluster.stored(this, update);
    if (++this.updatesSinceCompaction >= this.ctx.config.compactEveryUpdates) this.compactSoon();
  }

  /**
   * Compacts without letting a store error escape: thrown from a Yjs observer, it would leave the
   * doc's transaction cleanups behind, and Yjs would emit no update for the doc again. A
   * compaction is only an optimisation (every update is stored already), so one that fails is
   * logged and retried later, with backoff, while the doc keeps flowing.
   */
  private compactSoon(): void {
    if (this.compaction === 'idle') this.tryCompact(0);
  }

  private tryCompact(failures: number): void {
    this.compaction = 'idle';
    if (this.destroyed) return;
    try {
      this.compact();
    } catch (error) {
      const { metrics, log, clock } = this.ctx;
      metrics.inc('flint_compaction_failures_total');
      const delayMs = Math.min(compactionRetryMaxMs, compactionRetryFirstMs * 2 ** failures);
      log('warn', 'compaction failed; the doc keeps its update log and retries', { docKey: this.docKey, delayMs, error: String(error) });
      this.compaction = { retry: clock.setTimeout(() => this.tryCompact(failures + 1), delayMs) };
    }
  }

  /**
   * The store refused an update: this doc holds a change the store does not, so the room is
   * dropped from memory (RoomRegistry) and its tabs' sync sends the change again.
   */
  private failStore(error: unknown): void {
    if (this.storeFailed) return;
    this.storeFailed = true;
    this.ctx.storeFailed(this, error);
  }

  /**
   * Resolves once every change made here so far is stored (null: already): what is sent to
   * another gateway must be stored first. Rejects if the store refused one.
   */
  whenStored(): Promise<void> | null {
    return this.storing;
  }

  /** No session follows this doc. */
  get idle(): boolean {
    return this.subscribers.size === 0;
  }

  /**
   * Whether applying an update of this size would pass the document size limit. The stored size
   * counts every update since the last compaction, deleted text included (a big paste cleared
   * again), so before saying yes it compacts — if the store can — and asks again.
   */
  wouldExceedLimit(updateBytes: number): boolean {
    const limit = this.ctx.config.limits.maxDocBytes;
    if (this.storedBytes + updateBytes <= limit) return false;
    try {
      this.compact();
    } catch (error) {
      this.ctx.log('warn', 'could not compact a doc near its size limit', { docKey: this.docKey, error: String(error) });
    }
    return this.storedBytes + updateBytes > limit;
  }

  /** Folds the stored updates into one row. Throws what the store throws (a database down). */
  compact(): void {
    if (this.updatesSinceCompaction <= 1 || this.storeFailed) return;
    const merged = Y.encodeStateAsUpdate(this.doc);
    this.ctx.store.compactDoc(this.docKey, merged);
    this.storedBytes = merged.byteLength;
    this.updatesSinceCompaction = 1;
    this.ctx.metrics.inc('flint_doc_compactions_total');
  }

  /**
   * Sends awareness entries to every subscriber but `except`, and, unless they came from
   * another gateway, to the other gateways.
   */
  broadcastAwareness(entries: AwarenessEntry[], except: Subscriber | null, fromCluster = false): void {
    if (entries.length === 0) return;
    const frame = this.awarenessFrame(entries);
    for (const subscriber of this.subscribers) {
      if (subscriber !== except) subscriber.sendAwareness(this, frame, entries);
    }
    if (!fromCluster) this.ctx.cluster.awarenessChanged(this, entries);
    for (const watcher of this.awarenessWatchers) watcher(entries);
  }

  awarenessFrame(entries: AwarenessEntry[]): Uint8Array {
    const encoder = startDocFrame(Channel.Awareness, this.docId);
    writeAwarenessUpdate(encoder, entries);
    return encoding.toUint8Array(encoder);
  }

  unsubscribe(subscriber: RoomSession): void {
    if (!this.subscribers.delete(subscriber)) return;
    this.broadcastAwareness(this.awareness.removeOwnedBy(subscriber), subscriber);
  }

  /**
   * Takes in what the store holds that this doc lacks. A gateway of the cluster that died between
   * storing a change and publishing it left it only in the store (decision 0024): the survivors
   * read it back when they learn it is gone, so what they show and what a fresh load shows agree.
   */
  catchUpFromStore(): void {
    const merged = mergeOrNull(this.ctx.store.loadDoc(this.docKey).updates);
    if (!merged) return;
    const missing = Y.diffUpdate(merged, Y.encodeStateVector(this.doc));
    Y.applyUpdate(this.doc, missing, CLUSTER_ORIGIN);
    const store = this.doc.store;
    if (store.pendingStructs !== null || store.pendingDs !== null) {
      store.pendingStructs = null;
      store.pendingDs = null;
      this.ctx.log('error', 'the stored updates left structs pending on a catch-up; dropped them', { docKey: this.docKey });
    }
  }

  destroy(): void {
    this.destroyed = true;
    if (typeof this.compaction === 'object') this.ctx.clock.clearTimeout(this.compaction.retry);
    this.compaction = 'idle';
    this.doc.off('update', this.onUpdate);
    this.doc.destroy();
  }
}
