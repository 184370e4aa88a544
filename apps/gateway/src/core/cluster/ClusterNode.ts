import { THREAD_DOC_ID, type ThreadAuthor, type ThreadRequest } from '@flint/protocol';
import * as Y from 'yjs';
import type { AwarenessEntry } from '../AwarenessRelay';
import type { Log } from '../ports/Log';
import type { Random } from '../ports/Random';
import { CLUSTER_ORIGIN, type DocCluster, type LiveDoc } from '../LiveDoc';
import type { Metrics } from '../Metrics';
import type { Room } from '../Room';
import type { Subscriber } from '../Subscriber';
import { gatewayLapsedMessage } from '../agent/Turn';
import { ThreadLog } from '../thread/ThreadLog';
import { turnsOf } from '../agent/roomTurns';
import type { RevocationWatch } from './RevocationWatch';
import type { ClusterBus, ClusterListener, ClusterMessage, RemoteAwarenessEntry, WorkspaceMessage } from '../ports/ClusterBus';

/** Who owns, on this gateway, the cursors a session on another gateway set. */
interface RemoteOwner extends Subscriber {
  readonly gateway: string;
}

export interface ClusterNodeDeps {
  bus: ClusterBus;
  /** A workspace's room if it is loaded here (never loads one). */
  loadedRoom(workspaceId: string): Room | null;
  loadedRooms(): Iterable<Room>;
  /** Revocations announced, and missed while the bus was down (`RevocationWatch`). */
  revocations: Pick<RevocationWatch, 'revokedHere' | 'interrupted' | 'resumed'>;
  /** Handles a thread message or Stop sent on another gateway for the turn running here. */
  threadRequest(room: Room, request: ThreadRequest, linkId: string, author: ThreadAuthor): void;
  metrics: Metrics;
  log: Log;
  now(): number;
  random: Random;
}

const gatewayGoneMessage = 'The gateway running this turn stopped. What it wrote before that is in the files for review.';

/**
 * This gateway as one of a cluster (decision 0024): what its rooms change goes out on the bus,
 * what other gateways publish comes in and reaches this gateway's sessions as if made here.
 * With a `SoloBus` every method is a no-op or never called.
 */
export class ClusterNode implements DocCluster, ClusterListener {
  private readonly owners = new Map<string, RemoteOwner>();

  constructor(private readonly deps: ClusterNodeDeps) {
    const { metrics } = deps;
    metrics.describe('flint_cluster_messages_out_total', 'Messages published to the other gateways, by kind.');
    metrics.describe('flint_cluster_messages_in_total', 'Messages from other gateways for a room loaded here, by kind.');
    metrics.describe('flint_cluster_gateways', 'Gateways of the cluster alive now, this one included.');
    metrics.describe('flint_cluster_gateways_gone_total', 'Gateways this one saw stop (a goodbye, or silent past the liveness timeout).');
    metrics.describe('flint_cluster_messages_dropped_total', 'Messages from other gateways that did not apply here, by kind.');
    metrics.gauge('flint_cluster_gateways', () => deps.bus.aliveGateways());
    metrics.describe('flint_cluster_fenced_total', 'Times the others took this gateway for gone (it froze, or lost Redis past the liveness timeout) and it ended its turns before rejoining.');
    metrics.describe('flint_cluster_connected', 'Whether this gateway hears the others now (1) or not (0).');
    metrics.gauge('flint_cluster_connected', () => (deps.bus.connected ? 1 : 0));
  }

  /** Whether the others count this gateway in (alone: always): its agent writes only while they do. */
  get member(): boolean {
    return this.deps.bus.member;
  }

  /** Whether this gateway hears the others now (alone: always). */
  get connected(): boolean {
    return this.deps.bus.connected;
  }

  private send(workspaceId: string, message: WorkspaceMessage): void {
    this.deps.metrics.inc('flint_cluster_messages_out_total', { kind: message.kind });
    this.deps.bus.publish(workspaceId, message);
  }

  get gatewayId(): string {
    return this.deps.bus.gatewayId;
  }

  get clustered(): boolean {
    return this.deps.bus.clustered;
  }

  isAlive(gatewayId: string): boolean {
    return this.deps.bus.isAlive(gatewayId);
  }

  follow(workspaceId: string): void {
    this.deps.bus.follow(workspaceId);
  }

  unfollow(workspaceId: string): void {
    this.deps.bus.unfollow(workspaceId);
  }

  announce(message: ClusterMessage): void {
    this.deps.bus.announce(message);
  }

  // ---- what this gateway changed ----

  /**
   * What was published before this gateway followed the workspace is in the store, but cursors
   * are not stored: ask the gateways holding the doc (they answer with cursors, and any update
   * the load missed).
   */
  loaded(live: LiveDoc): void {
    if (!this.clustered) return;
    this.send(live.workspaceId, { kind: 'sync', docId: live.docId, stateVector: Y.encodeStateVector(live.doc) });
  }

  stored(live: LiveDoc, update: Uint8Array): void {
    if (!this.clustered) return;
    this.send(live.workspaceId, { kind: 'update', docId: live.docId, update });
  }

  awarenessChanged(live: LiveDoc, entries: AwarenessEntry[]): void {
    if (!this.clustered) return;
    const relayed: RemoteAwarenessEntry[] = entries.map((entry) => ({ ...entry, linkId: live.awareness.linkIdOf(entry.clientId) }));
    this.send(live.workspaceId, { kind: 'awareness', docId: live.docId, entries: relayed });
  }

  publish(workspaceId: string, message: WorkspaceMessage): void {
    if (this.clustered) this.send(workspaceId, message);
  }

  // ---- what other gateways changed ----

  workspace(workspaceId: string, from: string, message: WorkspaceMessage): void {
    const room = this.deps.loadedRoom(workspaceId);
    if (!room) return;
    try {
      this.receive(room, from, message);
    } catch (error) {
      // A message this gateway cannot apply must not take its sessions down with it.
      this.deps.metrics.inc('flint_cluster_messages_dropped_total', { kind: message.kind });
      this.deps.log('error', 'dropped a cluster message that does not apply', { workspaceId, from, kind: message.kind, error: String(error) });
    }
  }

  private receive(room: Room, from: string, message: WorkspaceMessage): void {
    this.deps.metrics.inc('flint_cluster_messages_in_total', { kind: message.kind });
    switch (message.kind) {
      case 'update': {
        // Not loaded here: the store has it (stored before published); a later load reads it.
        const live = room.loaded(message.docId);
        if (live) Y.applyUpdate(live.doc, message.update, CLUSTER_ORIGIN);
        return;
      }
      case 'sync':
        return this.answerSync(room, message.docId, message.stateVector, message.answer === true);
      case 'awareness': {
        const live = room.loaded(message.docId);
        if (!live) return;
        const changed = live.awareness.applyRemote(message.entries, (linkId) => this.ownerFor(from, linkId));
        live.broadcastAwareness(changed, null, true);
        return;
      }
      case 'turn': {
        const { turn } = message;
        const { remote } = turnsOf(room);
        if (turn.status === 'streaming') remote.set(turn.turnId, { gateway: from, turn });
        else remote.delete(turn.turnId);
        room.sendTurn(turn);
        return;
      }
      case 'agent': {
        if (message.gateway !== this.gatewayId) return;
        const turn = turnsOf(room).inline.get(message.turnId);
        if (message.action === 'cancel') turn?.cancel();
        else turn?.steer(message.instruction);
        return;
      }
      case 'thread':
        if (message.gateway === this.gatewayId) this.deps.threadRequest(room, message.request, message.linkId, message.author);
        return;
    }
  }

  /**
   * Another gateway loaded the doc (or came back to the bus) and says what it has: it gets what
   * it lacks (with this doc's deletions: a state vector does not show those), this gateway's
   * cursors, and — unless its sync was itself an answer — a sync back, for what this one lacks.
   */
  private answerSync(room: Room, docId: string, stateVector: Uint8Array, isAnswer: boolean): void {
    const live = room.loaded(docId);
    if (!live) return;
    const workspaceId = room.workspace.id;
    // What the doc holds now, sent once it is all stored: no other gateway may hold a change the
    // store does not (it would never store it: it believes the sender did).
    const update = Y.encodeStateAsUpdate(live.doc, stateVector);
    const send = () => this.send(workspaceId, { kind: 'update', docId, update });
    const storing = live.whenStored();
    if (storing) storing.then(send, () => {}); // refused: the room is dropped, and this answer with it
    else send();
    if (!isAnswer) {
      const cursors = live.awareness.ownedHere((owner) => this.isRemoteOwner(owner));
      if (cursors.length > 0) {
        const entries = cursors.map((entry) => ({ ...entry, linkId: live.awareness.linkIdOf(entry.clientId) }));
        this.send(workspaceId, { kind: 'awareness', docId, entries });
      }
      this.send(workspaceId, { kind: 'sync', docId, stateVector: Y.encodeStateVector(live.doc), answer: true });
    }
  }

  cluster(_from: string, message: ClusterMessage): void {
    if (message.kind === 'revoke') this.deps.revocations.revokedHere(message.linkId);
  }

  interrupted(): void {
    this.deps.revocations.interrupted();
  }

  resumed(): void {
    this.deps.revocations.resumed();
  }

  /** The subscription is live: what was published before it may be missing, so ask. */
  following(workspaceId: string): void {
    const room = this.deps.loadedRoom(workspaceId);
    if (!room) return;
    for (const live of room.loadedDocs()) {
      this.send(workspaceId, { kind: 'sync', docId: live.docId, stateVector: Y.encodeStateVector(live.doc) });
    }
  }

  /**
   * A gateway stopped: its sessions' cursors go, its inline turns end as failed for the sessions
   * here (their text stays in the files, for review), and its thread turn ends in the thread.
   */
  gatewayGone(gatewayId: string): void {
    this.deps.log('warn', 'a gateway of the cluster is gone', { gatewayId });
    this.deps.metrics.inc('flint_cluster_gateways_gone_total');
    const owners = [...this.owners.values()].filter((owner) => owner.gateway === gatewayId);
    for (const room of this.deps.loadedRooms()) {
      for (const live of room.loadedDocs()) {
        for (const owner of owners) live.broadcastAwareness(live.awareness.removeOwnedBy(owner), null, true);
        // What it stored but never published (it died in between) is read back from the store.
        try {
          live.catchUpFromStore();
        } catch (error) {
          this.deps.log('error', 'could not read back what a gone gateway stored', { docKey: `${room.workspace.id}/${live.docId}`, error: String(error) });
        }
      }
      const { remote } = turnsOf(room);
      for (const [turnId, { gateway, turn }] of [...remote]) {
        if (gateway !== gatewayId) continue;
        remote.delete(turnId);
        room.sendTurn({ ...turn, status: 'failed', error: { code: 'internal', message: gatewayGoneMessage, retryAfterMs: null } });
      }
    }
    for (const owner of owners) this.owners.delete(`${owner.gateway}\n${owner.linkId}`);
    void this.closeThreadTurns(gatewayId);
  }

  /**
   * The others took this gateway for gone and showed its turns failed: they end here too, with
   * nothing more written, before it rejoins — else a gateway that froze for a while would carry
   * on writing into turns everyone else was told had stopped.
   */
  fenced(): void {
    this.deps.log('warn', 'this gateway was taken for gone by the others: ending its turns before it rejoins');
    this.deps.metrics.inc('flint_cluster_fenced_total');
    for (const room of this.deps.loadedRooms()) {
      const turns = turnsOf(room);
      for (const turn of [...turns.inline.values()]) turn.abandon(gatewayLapsedMessage);
      turns.thread?.abandon(gatewayLapsedMessage);
    }
  }

  /** One gateway writes the thread's notice (the first to claim it), not every survivor. */
  private async closeThreadTurns(gatewayId: string): Promise<void> {
    for (const room of [...this.deps.loadedRooms()]) {
      const thread = room.loaded(THREAD_DOC_ID);
      if (!thread) continue;
      const log = new ThreadLog(thread.doc, this.deps.now, this.deps.random);
      const gone = log.allTurns().filter((turn) => turn.status === 'streaming' && turn.gateway === gatewayId);
      if (gone.length === 0) continue;
      if (!(await this.deps.bus.claim(`thread-closed:${room.workspace.id}:${gone[0]!.turnId}`, 60_000))) continue;
      if (this.deps.loadedRoom(room.workspace.id) !== room) continue;
      log.closeInterrupted((turn) => turn.gateway === gatewayId, gatewayGoneMessage);
      room.endWriting(gone);
    }
  }

  private ownerFor(gateway: string, linkId: string): RemoteOwner {
    const key = `${gateway}\n${linkId}`;
    let owner = this.owners.get(key);
    if (!owner) this.owners.set(key, (owner = { gateway, linkId, sessionId: `gateway:${gateway}`, send: () => {} }));
    return owner;
  }

  private isRemoteOwner(owner: Subscriber): boolean {
    return 'gateway' in owner;
  }
}
