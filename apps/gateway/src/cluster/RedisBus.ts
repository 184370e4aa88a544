import { Redis } from 'ioredis';
import type { ClusterBus, ClusterListener, ClusterMessage, WorkspaceMessage } from '../core/cluster/ClusterBus';
import { decodeFrame, encodeFrame, type BusMessage } from '../core/cluster/clusterFrame';
import type { Log } from '../core/GatewayContext';

export interface RedisBusOptions {
  url: string;
  gatewayId: string;
  log: Log;
  /** Key and channel prefix, so several clusters can share one Redis. */
  prefix?: string;
  /** How often a gateway says it is alive. */
  heartbeatMs?: number;
  /** A gateway not heard from for this long is gone. */
  livenessMs?: number;
}


/**
 * Gateways joined by Redis pub/sub (decision 0024): one channel per workspace, followed while
 * its room is loaded here, and one for the whole cluster (revocations, heartbeats). Messages are
 * binary — a document update crosses as its bytes, not as base64 in JSON. Liveness: every
 * gateway publishes a heartbeat and keeps its last one in a sorted set, so a gateway that starts
 * knows at once which others run; one silent past `livenessMs` is gone.
 */
export class RedisBus implements ClusterBus {
  readonly clustered = true;
  readonly gatewayId: string;
  private readonly pub: Redis;
  private readonly sub: Redis;
  private readonly prefix: string;
  private readonly heartbeatMs: number;
  private readonly livenessMs: number;
  private readonly followed = new Set<string>();
  /** Other gateways, by id: when this one last heard from each (its own clock). */
  private readonly peers = new Map<string, number>();
  private listener: ClusterListener | null = null;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(private readonly options: RedisBusOptions) {
    this.gatewayId = options.gatewayId;
    this.prefix = options.prefix ?? 'flint:';
    this.heartbeatMs = options.heartbeatMs ?? 1000;
    this.livenessMs = options.livenessMs ?? 5000;
    const redisOptions = { lazyConnect: true, maxRetriesPerRequest: null, connectionName: `flint-${this.gatewayId}` };
    this.pub = new Redis(options.url, redisOptions);
    this.sub = new Redis(options.url, redisOptions);
    for (const [name, client] of [['publish', this.pub], ['subscribe', this.sub]] as const) {
      client.on('error', (error: Error) => options.log('warn', `redis ${name} connection: ${error.message}`));
    }
  }

  private get clusterChannel(): string {
    return `${this.prefix}cluster`;
  }

  private channelOf(workspaceId: string): string {
    return `${this.prefix}ws:${workspaceId}`;
  }

  private get gatewaysKey(): string {
    return `${this.prefix}gateways`;
  }

  async start(listener: ClusterListener): Promise<void> {
    this.listener = listener;
    await Promise.all([this.pub.connect(), this.sub.connect()]);
    this.sub.on('messageBuffer', (channel: Buffer, frame: Buffer) => this.receive(channel.toString(), frame));
    await this.sub.subscribe(this.clusterChannel);
    // After a lost connection ioredis subscribes again; what was published meanwhile is missed.
    this.sub.on('ready', () => void this.resubscribed());
    this.sub.on('close', () => {
      if (!this.closed) this.listener?.interrupted();
    });
    const now = Date.now();
    const alive = await this.pub.zrangebyscore(this.gatewaysKey, now - this.livenessMs, '+inf');
    for (const id of alive) if (id !== this.gatewayId) this.peers.set(id, now);
    await this.heartbeat();
    this.timer = setInterval(() => void this.heartbeat().then(() => this.expirePeers()), this.heartbeatMs);
    this.timer.unref();
  }

  private async resubscribed(): Promise<void> {
    if (this.closed) return;
    try {
      // ioredis subscribes again on its own; once these answer, its subscriptions are live too.
      await this.sub.subscribe(this.clusterChannel, ...[...this.followed].map((id) => this.channelOf(id)));
    } catch (error) {
      this.options.log('warn', 'redis subscribe failed', { error: String(error) });
      return; // the connection dropped again: the next 'ready' comes back here
    }
    this.listener?.resumed();
    for (const workspaceId of this.followed) this.listener?.following(workspaceId);
  }

  private async heartbeat(): Promise<void> {
    if (this.closed) return;
    try {
      const now = Date.now();
      await this.pub.zadd(this.gatewaysKey, now, this.gatewayId);
      // Gateways killed without a goodbye leave their last heartbeat behind: an hour is plenty.
      await this.pub.zremrangebyscore(this.gatewaysKey, '-inf', now - 3_600_000);
      await this.pub.publish(this.clusterChannel, this.encode({ kind: 'heartbeat' }));
    } catch (error) {
      this.options.log('warn', 'redis heartbeat failed', { error: String(error) });
    }
  }

  private expirePeers(): void {
    const oldest = Date.now() - this.livenessMs;
    for (const [id, seen] of [...this.peers]) {
      if (seen >= oldest) continue;
      this.peers.delete(id);
      this.listener?.gatewayGone(id);
    }
  }

  follow(workspaceId: string): void {
    if (this.followed.has(workspaceId)) return;
    this.followed.add(workspaceId);
    this.sub.subscribe(this.channelOf(workspaceId)).then(
      () => {
        if (this.followed.has(workspaceId)) this.listener?.following(workspaceId);
      },
      (error: Error) => this.options.log('warn', 'redis subscribe failed', { workspaceId, error: error.message }),
    );
  }

  unfollow(workspaceId: string): void {
    if (!this.followed.delete(workspaceId) || this.closed) return;
    this.sub.unsubscribe(this.channelOf(workspaceId)).catch(() => {});
  }

  publish(workspaceId: string, message: WorkspaceMessage): void {
    if (this.closed) return;
    this.pub.publish(this.channelOf(workspaceId), this.encode(message)).catch((error: Error) => {
      this.options.log('warn', 'redis publish failed', { workspaceId, kind: message.kind, error: error.message });
    });
  }

  announce(message: ClusterMessage): void {
    if (this.closed) return;
    this.pub.publish(this.clusterChannel, this.encode(message)).catch((error: Error) => {
      this.options.log('warn', 'redis publish failed', { kind: message.kind, error: error.message });
    });
  }

  get connected(): boolean {
    return !this.closed && this.pub.status === 'ready' && this.sub.status === 'ready';
  }

  aliveGateways(): number {
    return this.peers.size + 1;
  }

  isAlive(gatewayId: string): boolean {
    return gatewayId === this.gatewayId || this.peers.has(gatewayId);
  }

  async claim(key: string, ttlMs: number): Promise<boolean> {
    try {
      return (await this.pub.set(`${this.prefix}claim:${key}`, this.gatewayId, 'PX', ttlMs, 'NX')) === 'OK';
    } catch {
      return false;
    }
  }

  /** Says goodbye (the others end this gateway's turns and cursors at once) and disconnects. */
  async close(): Promise<void> {
    if (this.closed) return;
    if (this.timer) clearInterval(this.timer);
    try {
      await this.pub.publish(this.clusterChannel, this.encode({ kind: 'bye' }));
      await this.pub.zrem(this.gatewaysKey, this.gatewayId);
    } catch {
      // Redis is gone: the others notice the silence instead.
    }
    this.closed = true;
    this.sub.disconnect();
    this.pub.disconnect();
  }

  private receive(channel: string, frame: Buffer): void {
    let from: string;
    let message: WorkspaceMessage | BusMessage;
    try {
      ({ from, message } = decodeFrame(frame));
    } catch (error) {
      this.options.log('warn', 'dropped an undecodable cluster frame', { channel, error: String(error) });
      return;
    }
    if (from === this.gatewayId || !this.listener) return;
    if (message.kind === 'bye') {
      if (this.peers.delete(from)) this.listener.gatewayGone(from);
      return;
    }
    this.peers.set(from, Date.now());
    if (message.kind === 'heartbeat') return;
    if (channel === this.clusterChannel) {
      if (message.kind === 'revoke') this.listener.cluster(from, message);
      return;
    }
    const workspaceId = channel.slice(`${this.prefix}ws:`.length);
    this.listener.workspace(workspaceId, from, message as WorkspaceMessage);
  }

  private encode(message: WorkspaceMessage | BusMessage): Buffer {
    return Buffer.from(encodeFrame(this.gatewayId, message));
  }
}
