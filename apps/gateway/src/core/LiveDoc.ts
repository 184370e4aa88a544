import { Channel, startDocFrame } from '@flint/protocol';
import * as encoding from 'lib0/encoding';
import * as syncProtocol from 'y-protocols/sync';
import * as Y from 'yjs';
import { AwarenessRelay, writeAwarenessUpdate, type AwarenessEntry } from './AwarenessRelay';
import type { GatewayConfig } from './GatewayConfig';
import type { Metrics } from './Metrics';
import type { Store } from '../storage/Store';
import type { RoomSession, Subscriber } from './Subscriber';

/** The origin of changes the gateway makes itself (file tree operations, seeding). */
export const GATEWAY_ORIGIN = Symbol('gateway');

/**
 * One loaded document of a room: its Y.Doc, its awareness and the sessions subscribed to it.
 * Every change is appended to the store before it is broadcast, so nothing a client saw can be
 * lost by a crash (DESIGN §8).
 */
export class LiveDoc {
  readonly doc = new Y.Doc();
  readonly awareness = new AwarenessRelay();
  readonly subscribers = new Set<RoomSession>();
  /** Bytes of the stored updates: an upper bound of the encoded document, cheap to keep. */
  storedBytes: number;
  private updatesSinceCompaction: number;

  constructor(
    readonly docId: string,
    private readonly docKey: string,
    private readonly store: Store,
    private readonly config: GatewayConfig,
    private readonly metrics: Metrics,
  ) {
    const stored = store.loadDoc(docKey);
    if (stored.updates.length > 0) Y.applyUpdate(this.doc, Y.mergeUpdates(stored.updates));
    this.storedBytes = stored.bytes;
    this.updatesSinceCompaction = stored.updates.length;
    this.doc.on('update', this.onUpdate);
  }

  private readonly onUpdate = (update: Uint8Array, origin: unknown, _doc: Y.Doc, transaction: Y.Transaction): void => {
    this.store.appendUpdate(this.docKey, update);
    this.storedBytes += update.byteLength;
    this.metrics.inc('flint_doc_updates_total');
    const encoder = startDocFrame(Channel.Sync, this.docId);
    syncProtocol.writeUpdate(encoder, update);
    const frame = encoding.toUint8Array(encoder);
    for (const subscriber of this.subscribers) {
      if (subscriber !== origin) subscriber.sendUpdate(this, frame, transaction.beforeState);
    }
    if (++this.updatesSinceCompaction >= this.config.compactEveryUpdates) this.compact();
  };

  /** Whether applying an update of this size would pass the document size limit. */
  wouldExceedLimit(updateBytes: number): boolean {
    return this.storedBytes + updateBytes > this.config.limits.maxDocBytes;
  }

  compact(): void {
    if (this.updatesSinceCompaction <= 1) return;
    const merged = Y.encodeStateAsUpdate(this.doc);
    this.store.compactDoc(this.docKey, merged);
    this.storedBytes = merged.byteLength;
    this.updatesSinceCompaction = 1;
    this.metrics.inc('flint_doc_compactions_total');
  }

  /** Sends awareness entries to every subscriber but `except`. */
  broadcastAwareness(entries: AwarenessEntry[], except: Subscriber | null): void {
    if (entries.length === 0) return;
    const frame = this.awarenessFrame(entries);
    for (const subscriber of this.subscribers) {
      if (subscriber !== except) subscriber.sendAwareness(this, frame, entries);
    }
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

  destroy(): void {
    this.doc.off('update', this.onUpdate);
    this.doc.destroy();
  }
}
