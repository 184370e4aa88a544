import type { ClusterBus, ClusterListener, ClusterMessage, WorkspaceMessage } from '../src/core/ports/ClusterBus';
import { decodeFrame, encodeFrame } from '../src/core/cluster/clusterFrame';

/**
 * Redis pub/sub in memory, as unreliable as the real one may be: a message is delivered later
 * (when the test says), to the buses following its workspace at that moment, or dropped.
 * Messages cross as the frames RedisBus sends, so what a gateway hears is what Redis would carry.
 */
export class MemoryHub {
  readonly buses = new Set<MemoryBus>();
  private readonly queue: Array<() => void> = [];
  private readonly claims = new Set<string>();
  drop: () => boolean = () => false;

  enqueue(deliver: () => void): void {
    this.queue.push(deliver);
  }

  /** Delivers the first `count` messages waiting (all by default); returns how many it did. */
  deliver(count = Infinity): number {
    let done = 0;
    while (done < count && this.queue.length > 0) {
      this.queue.shift()!();
      done++;
    }
    return done;
  }

  claim(key: string): boolean {
    if (this.claims.has(key)) return false;
    this.claims.add(key);
    return true;
  }
}

export class MemoryBus implements ClusterBus {
  readonly clustered = true;
  readonly followed = new Set<string>();
  listener: ClusterListener | null = null;
  /** Whether this bus's connection is up: while it is down, everything sent to it is lost. */
  private up = true;

  constructor(
    private readonly hub: MemoryHub,
    readonly gatewayId: string,
  ) {}

  async start(listener: ClusterListener): Promise<void> {
    this.listener = listener;
  }

  follow(workspaceId: string): void {
    this.followed.add(workspaceId);
    this.hub.buses.add(this);
    // The subscription goes live a little later, as Redis's does.
    this.hub.enqueue(() => this.followed.has(workspaceId) && this.listener?.following(workspaceId));
  }

  unfollow(workspaceId: string): void {
    this.followed.delete(workspaceId);
  }

  publish(workspaceId: string, message: WorkspaceMessage): void {
    const frame = encodeFrame(this.gatewayId, message);
    for (const bus of this.hub.buses) {
      if (bus === this) continue;
      this.hub.enqueue(() => {
        if (!bus.up || !bus.followed.has(workspaceId) || this.hub.drop()) return;
        const { from, message: decoded } = decodeFrame(frame);
        bus.listener?.workspace(workspaceId, from, decoded as WorkspaceMessage);
      });
    }
  }

  announce(message: ClusterMessage): void {
    for (const bus of this.hub.buses) if (bus !== this) this.hub.enqueue(() => bus.up && bus.listener?.cluster(this.gatewayId, message));
  }

  /** The connection drops (a killed subscriber): what is sent to this gateway is lost until `reconnect`. */
  disconnect(): void {
    if (!this.up) return;
    this.up = false;
    this.listener?.interrupted();
  }

  /** The connection is back: the subscriptions are live again, as RedisBus reports them. */
  reconnect(): void {
    if (this.up) return;
    this.up = true;
    this.listener?.resumed();
    for (const workspaceId of this.followed) this.listener?.following(workspaceId);
  }

  readonly connected = true;
  readonly member = true;

  aliveGateways(): number {
    return this.hub.buses.size;
  }

  isAlive(gatewayId: string): boolean {
    return [...this.hub.buses].some((bus) => bus.gatewayId === gatewayId);
  }

  async claim(key: string): Promise<boolean> {
    return this.hub.claim(key);
  }

  async close(): Promise<void> {
    this.hub.buses.delete(this);
  }
}

