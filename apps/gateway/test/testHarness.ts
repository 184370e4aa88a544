/** Test wiring: a real Gateway on real SQLite, reached through in-memory sockets on a fake clock. */
import { FlintClient, type FlintClientOptions, type WebSocketLike } from '@flint/client';
import { Channel, encodeControl, encodeDocFrame, FILE_TEXT_KEY, INDEX_ENTRIES_KEY, PROTOCOL_VERSION, type IndexEntry } from '@flint/protocol';
import { FakeClock, MemoryNetwork, until, type MemorySocketPair } from '@flint/test-kit';
import * as encoding from 'lib0/encoding';
import * as syncProtocol from 'y-protocols/sync';
import * as Y from 'yjs';
import { SqliteStore } from '../src/storage/SqliteStore';
import { systemRandom } from '../src/transport/systemRandom';
import type { Store } from '../src/core/ports/Store';
import type { Clock, TimerHandle } from '../src/core/ports/Clock';
import { Gateway } from '../src/core/Gateway';
import type { ClusterBus } from '../src/core/ports/ClusterBus';
import type { ModelRouter } from '../src/core/agent/ModelRouter';
import type { GatewayConfig } from '../src/core/GatewayConfig';

type FakeTimer = ReturnType<FakeClock['setTimeout']>;

/**
 * One gateway process's view of the shared fake clock: a restart kills it, and with it every timer
 * the old gateway set (a dead process fires none; its idle unload must not write to a closed store).
 */
class ProcessClock implements Clock {
  private readonly timers = new Set<FakeTimer>();
  private dead = false;

  constructor(private readonly clock: FakeClock) {}

  now(): number {
    return this.clock.now();
  }

  setTimeout(fn: () => void, delayMs: number): TimerHandle {
    if (this.dead) return null;
    const handle = this.clock.setTimeout(() => {
      this.timers.delete(handle);
      fn();
    }, delayMs);
    this.timers.add(handle);
    return handle;
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers.delete(handle as FakeTimer);
    this.clock.clearTimeout(handle as FakeTimer);
  }

  afterIo(fn: () => void): void {
    this.clock.afterIo(() => this.dead || fn());
  }

  kill(): void {
    this.dead = true;
    for (const handle of this.timers) this.clock.clearTimeout(handle);
    this.timers.clear();
  }
}

export class Harness {
  readonly net = new MemoryNetwork();
  gateway: Gateway;
  private processClock: ProcessClock;

  constructor(
    public store: Store = new SqliteStore(':memory:'),
    private readonly config: Partial<GatewayConfig> = {},
    private readonly models?: ModelRouter,
    readonly clock = new FakeClock(),
    /** Makes a bus per gateway (each restart gets a new one): a cluster's tests. */
    private readonly makeBus?: () => ClusterBus,
  ) {
    this.processClock = new ProcessClock(clock);
    this.gateway = new Gateway({ store, clock: this.processClock, random: systemRandom, config, models, bus: makeBus?.() });
  }

  /** Replaces the gateway by a fresh one on `store` (a restart), dropping every connection. */
  restart(store: Store = this.store): void {
    for (const pair of this.net.pairs) pair.disconnect(1006, 'gateway died');
    this.net.flush();
    this.processClock.kill();
    this.processClock = new ProcessClock(this.clock);
    this.store = store;
    this.gateway = new Gateway({ store, clock: this.processClock, random: systemRandom, config: this.config, models: this.models, bus: this.makeBus?.() });
  }

  /** Opens a raw socket to the gateway, for hand-written clients. */
  openRaw(): MemorySocketPair {
    return this.net.open((pair) => {
      const connection = this.gateway.connect(pair.server);
      pair.accept({ onMessage: (data) => connection.receive(data), onClose: () => connection.closed(), onDrain: () => connection.drained() });
    });
  }

  client(workspaceId: string, token: string, options: Partial<FlintClientOptions> = {}): FlintClient {
    return new FlintClient({
      url: 'memory://gateway',
      workspaceId,
      token,
      timers: this.clock,
      createSocket: () => this.openRaw().client as unknown as WebSocketLike,
      ...options,
    });
  }

  flush(): void {
    this.net.flush();
  }

  /**
   * Flushes the in-memory sockets, letting I/O callbacks run between flushes, until `result`
   * settles: a request is answered once admitted, and a prompt first syncs a file it has not opened.
   */
  async answered<T>(result: Promise<T>, rounds = 20): Promise<T> {
    let settled = false;
    void result.then(() => (settled = true));
    for (let i = 0; i < rounds && !settled; i++) {
      this.net.flush();
      for (let j = 0; j < 5; j++) await new Promise<void>((resolve) => setImmediate(resolve));
    }
    return result;
  }

  /** Flushes, advancing the clock, until `done` holds (e.g. a client reconnected). */
  settle(done: () => boolean, stepMs = 100, maxSteps = 500): void {
    for (let i = 0; i < maxSteps; i++) {
      this.net.flush();
      if (done()) return;
      this.clock.advance(stepMs);
    }
    throw new Error('condition not reached');
  }
}

export function fileIdOf(client: FlintClient, path: string): string {
  const entry = client.index.doc.getMap<IndexEntry>(INDEX_ENTRIES_KEY).get(path);
  if (entry?.kind !== 'file') throw new Error(`no file at ${path}`);
  return entry.fileId;
}

export function textOf(client: FlintClient, fileId: string): Y.Text {
  return client.openDoc(fileId).doc.getText(FILE_TEXT_KEY);
}

/** A hand-written client: says hello and exposes frame builders. */
export function hello(pair: MemorySocketPair, workspaceId: string, token: string, protocolVersion = PROTOCOL_VERSION): void {
  pair.flush();
  pair.client.send(encodeControl({ type: 'hello', protocolVersion, workspaceId, token }));
}

export function syncStep1Frame(docId: string, doc = new Y.Doc()): Uint8Array {
  const encoder = encoding.createEncoder();
  syncProtocol.writeSyncStep1(encoder, doc);
  return encodeDocFrame(Channel.Sync, docId, encoding.toUint8Array(encoder));
}

export function updateFrame(docId: string, update: Uint8Array): Uint8Array {
  const encoder = encoding.createEncoder();
  syncProtocol.writeUpdate(encoder, update);
  return encodeDocFrame(Channel.Sync, docId, encoding.toUint8Array(encoder));
}

/** An update that inserts `text` into a file's content, from a doc of its own. */
export function insertUpdate(text: string): Uint8Array {
  const doc = new Y.Doc();
  doc.getText(FILE_TEXT_KEY).insert(0, text);
  return Y.encodeStateAsUpdate(doc);
}

/**
 * For tests with real I/O next to the harness (a provider on loopback): flushes the in-memory
 * sockets and lets real I/O in, a turn of the event loop at a time (the fake clock moving 8 ms
 * each), until `done`.
 */
export function untilRealIo(h: Harness, done: () => boolean, what: string): Promise<void> {
  return until(done, what, { step: () => h.flush(), wait: () => new Promise<void>((resolve) => (h.clock.advance(8), setImmediate(resolve))) });
}

/** Flushes the harness and lets real time pass (a watcher, the disk's writes) until `done()`. */
export function untilFlushed(h: Harness | null, done: () => boolean, what: string): Promise<void> {
  return until(done, what, { step: () => h?.flush() });
}
