import { CloseCode } from '@flint/protocol';
import type { Store } from './ports/Store';
import type { Clock, TimerHandle } from './ports/Clock';
import type { GatewayConfig } from './GatewayConfig';
import type { Log } from './ports/Log';
import type { Random } from './ports/Random';
import type { DocCluster, LiveDoc } from './LiveDoc';
import type { Extensions } from './Extension';
import type { Metrics } from './Metrics';
import { Room } from './Room';

/** What the registry needs of the cluster: its rooms' docs publish through it, and it follows them. */
export interface RoomCluster extends DocCluster {
  follow(workspaceId: string): void;
  unfollow(workspaceId: string): void;
}

/** The first retry of an unload that could not compact, doubling up to the last. */
const unloadRetryFirstMs = 5_000;
const unloadRetryMaxMs = 120_000;

/**
 * Loads rooms on demand and unloads them `idleUnloadMs` after their last session leaves, so
 * memory holds only workspaces someone is in (or just left: a reload costs no SQLite read).
 */
export class RoomRegistry {
  private readonly rooms = new Map<string, Room>();
  private readonly unloadTimers = new Map<string, TimerHandle>();
  /** Rooms kept loaded with no session (a folder project watches its disk): holders per workspace. */
  private readonly holds = new Map<string, number>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly random: Random,
    private readonly config: GatewayConfig,
    private readonly metrics: Metrics,
    private readonly log: Log,
    private readonly cluster: RoomCluster,
    private readonly extensions: Extensions,
  ) {}

  /** The room of a workspace, loaded if needed; null when the workspace does not exist. */
  get(workspaceId: string): Room | null {
    const loaded = this.rooms.get(workspaceId);
    if (loaded) {
      this.cancelUnload(workspaceId);
      return loaded;
    }
    const workspace = this.store.getWorkspace(workspaceId);
    if (!workspace) return null;
    const { store, config, metrics, clock, random, log, cluster } = this;
    const storeFailed = (live: LiveDoc, error: unknown) => this.storeFailed(workspaceId, live, error);
    const room = new Room(workspace, { store, config, metrics, clock, random, log, cluster, storeFailed });
    this.rooms.set(workspaceId, room);
    cluster.follow(workspaceId);
    this.metrics.inc('flint_room_loads_total');
    this.extensions.notify('onRoomLoad', room);
    return room;
  }

  /**
   * The store refused a change in a room: the room leaves memory (without storing) and its
   * sessions close with 4503; their tabs reconnect and their sync sends what they have again,
   * to a room loaded from what the store does hold. Done after the update event that failed.
   */
  private storeFailed(workspaceId: string, live: LiveDoc, error: unknown): void {
    this.metrics.inc('flint_store_failures_total');
    this.log('error', 'the store refused a document update; dropping the room', { workspaceId, docId: live.docId, error: String(error) });
    queueMicrotask(() => {
      const room = this.rooms.get(workspaceId);
      if (!room) return;
      this.rooms.delete(workspaceId);
      this.cluster.unfollow(workspaceId);
      for (const session of [...room.sessions]) session.close(CloseCode.StoreUnavailable, 'the store is unavailable');
      this.cancelUnload(workspaceId);
      this.holds.delete(workspaceId);
      room.discard();
      this.extensions.notify('onRoomUnload', room);
    });
  }

  /** A deleted workspace's room leaves memory at once, storing nothing; its sessions close with 4404. */
  discard(workspaceId: string, code: CloseCode = CloseCode.WorkspaceNotFound, reason = 'the workspace was deleted'): void {
    const room = this.rooms.get(workspaceId);
    if (!room) return;
    this.rooms.delete(workspaceId);
    this.cluster.unfollow(workspaceId);
    for (const session of [...room.sessions]) session.close(code, reason);
    this.cancelUnload(workspaceId);
    this.holds.delete(workspaceId);
    room.discard();
  }

  /** Called when a session leaves; starts the idle timer once the room is empty. */
  released(room: Room): void {
    this.unloadLater(room, this.config.idleUnloadMs, 0);
  }

  private unloadLater(room: Room, delayMs: number, failures: number): void {
    const id = room.workspace.id;
    if (room.sessions.size > 0 || this.unloadTimers.has(id) || this.holds.has(id)) return;
    this.unloadTimers.set(
      id,
      this.clock.setTimeout(() => {
        this.unloadTimers.delete(id);
        if (room.sessions.size > 0 || this.rooms.get(id) !== room) return;
        try {
          this.unload(room);
        } catch (error) {
          // A timer's throw would end the process. The room stays loaded (its updates are all
          // stored; only the compaction failed) and tries again, later each time.
          const retryMs = Math.min(unloadRetryMaxMs, unloadRetryFirstMs * 2 ** failures);
          this.metrics.inc('flint_unload_failures_total');
          this.log('warn', 'could not unload an idle room; keeping it and retrying', { workspaceId: id, retryMs, error: String(error) });
          this.unloadLater(room, retryMs, failures + 1);
        }
      }, delayMs),
    );
  }

  /** Keeps a workspace's room loaded until the returned release is called. */
  hold(workspaceId: string): { room: Room; release(): void } | null {
    const room = this.get(workspaceId);
    if (!room) return null;
    this.holds.set(workspaceId, (this.holds.get(workspaceId) ?? 0) + 1);
    let released = false;
    return {
      room,
      release: () => {
        if (released) return;
        released = true;
        const left = (this.holds.get(workspaceId) ?? 1) - 1;
        if (left > 0) this.holds.set(workspaceId, left);
        else this.holds.delete(workspaceId);
        this.released(room);
      },
    };
  }

  private cancelUnload(workspaceId: string): void {
    const timer = this.unloadTimers.get(workspaceId);
    if (timer === undefined) return;
    this.clock.clearTimeout(timer);
    this.unloadTimers.delete(workspaceId);
  }

  private unload(room: Room): void {
    room.unload();
    this.rooms.delete(room.workspace.id);
    this.cluster.unfollow(room.workspace.id);
    this.metrics.inc('flint_room_unloads_total');
    this.extensions.notify('onRoomUnload', room);
  }

  isLoaded(workspaceId: string): boolean {
    return this.rooms.has(workspaceId);
  }

  /** A room if it is loaded now (never loads one). */
  loaded(workspaceId: string): Room | null {
    return this.rooms.get(workspaceId) ?? null;
  }

  all(): Iterable<Room> {
    return this.rooms.values();
  }

  get size(): number {
    return this.rooms.size;
  }

  get loadedDocs(): number {
    let docs = 0;
    for (const room of this.rooms.values()) docs += room.loadedDocCount;
    return docs;
  }

  /** Compacts and unloads everything (shutdown); a room that cannot compact is let go as it is. */
  closeAll(): void {
    for (const id of [...this.unloadTimers.keys()]) this.cancelUnload(id);
    for (const room of [...this.rooms.values()]) {
      try {
        this.unload(room);
      } catch (error) {
        // Every update is in the store's log already; only the compaction is lost.
        this.log('warn', 'could not compact a room at shutdown', { workspaceId: room.workspace.id, error: String(error) });
        this.rooms.delete(room.workspace.id);
        this.cluster.unfollow(room.workspace.id);
        room.discard();
        this.extensions.notify('onRoomUnload', room);
      }
    }
  }
}
