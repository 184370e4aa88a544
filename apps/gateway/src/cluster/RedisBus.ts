import { Redis } from 'ioredis';
import type { ClusterBus, ClusterListener, ClusterMessage, WorkspaceMessage } from '../core/ports/ClusterBus';
import { decodeFrame, encodeFrame, type BusMessage } from '../core/cluster/clusterFrame';
import type { Log } from '../core/ports/Log';

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


/** Renews a registration if it still holds this generation: 1, or 0 when it lapsed. */
const renewScript = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0`;

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
  /** This run's registration: renewed by each heartbeat, a new one after it lapsed. */
  private generation = 0;
  private registered = false;
  /** When the last renewal Redis confirmed was sent (this gateway's clock). */
  private renewedAt = 0;

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

  /** A gateway's registration: its generation, expiring `livenessMs` after the last renewal. */
  private registrationKey(gatewayId: string): string {
    return `${this.prefix}gateway:${gatewayId}`;
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
    await this.register();
    await this.heartbeat();
    this.timer = setInterval(() => {
      this.heartbeat()
        .then(() => this.expirePeers())
        .catch((error: unknown) => this.options.log('error', 'the cluster heartbeat failed', { error: String(error) }));
    }, this.heartbeatMs);
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

  /**
   * Fencing (issue 31): the others take a gateway for gone once its registration expired, and
   * then end its turns. A gateway that could not renew it in time — it froze (SIGSTOP, a swap
   * storm), or lost Redis — learns so here, on its own clock before it says anything, or from
   * Redis (the key is gone or holds another generation): its turns end (`fenced`) before it
   * registers again and rejoins.
   */
  get member(): boolean {
    return this.registered && Date.now() - this.renewedAt <= this.livenessMs;
  }

  private async register(): Promise<void> {
    const sentAt = Date.now();
    const generation = ++this.generation;
    await this.pub.set(this.registrationKey(this.gatewayId), String(generation), 'PX', this.livenessMs);
    if (generation !== this.generation) return;
    this.registered = true;
    this.renewedAt = sentAt;
  }

  private lapse(why: string): void {
    if (!this.registered) return;
    this.registered = false;
    this.options.log('warn', 'this gateway was taken for gone: its registration lapsed', { why });
    this.listener?.fenced();
  }

  /** Renews the registration if it is still this run's; false when it lapsed. */
  private async renew(): Promise<boolean> {
    const sentAt = Date.now();
    const generation = this.generation;
    const kept = await this.pub.eval(renewScript, 1, this.registrationKey(this.gatewayId), String(generation), String(this.livenessMs));
    if (kept !== 1) return false;
    if (generation === this.generation && this.registered) this.renewedAt = Math.max(this.renewedAt, sentAt);
    return true;
  }

  private async heartbeat(): Promise<void> {
    if (this.closed) return;
    // Past the liveness timeout since the last renewal: the key has expired, whatever Redis says later.
    if (this.registered && Date.now() - this.renewedAt > this.livenessMs) this.lapse('not renewed within the liveness timeout');
    try {
      if (this.registered && !(await this.renew())) this.lapse('the registration is gone from Redis');
      if (!this.registered) await this.register();
      const now = Date.now();
      await this.pub.zadd(this.gatewaysKey, now, this.gatewayId);
      // Gateways killed without a goodbye leave their last heartbeat behind: an hour is plenty.
      await this.pub.zremrangebyscore(this.gatewaysKey, '-inf', now - 3_600_000);
      await this.pub.publish(this.clusterChannel, this.encode({ kind: 'heartbeat' }));
    } catch (error) {
      this.options.log('warn', 'redis heartbeat failed', { error: String(error) });
    }
  }

  /**
   * A gateway silent past the liveness timeout is gone once its registration has expired too (it
   * ends its own turns when it finds that). One still registered is alive: its heartbeats are
   * what is late. If Redis cannot say, silence decides.
   */
  private async expirePeers(): Promise<void> {
    const oldest = Date.now() - this.livenessMs;
    const silent = [...this.peers].filter(([, seen]) => seen < oldest).map(([id]) => id);
    if (silent.length === 0) return;
    let registered: Array<string | null> = silent.map(() => null);
    try {
      registered = await this.pub.mget(silent.map((id) => this.registrationKey(id)));
    } catch (error) {
      this.options.log('warn', 'redis: could not read the registrations of silent gateways', { error: String(error) });
    }
    silent.forEach((id, i) => {
      if (!this.peers.has(id)) return; // heard from meanwhile, or said goodbye
      if (registered[i] !== null) return void this.peers.set(id, Date.now());
      this.peers.delete(id);
      this.listener?.gatewayGone(id);
    });
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

  /**
   * How long a PING takes on both connections (the slower), or null when either is down or does
   * not answer within `timeoutMs` — a paused or overloaded Redis carries no edits either.
   */
  async roundTripMs(timeoutMs: number): Promise<number | null> {
    if (!this.connected) return null;
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), timeoutMs)));
    try {
      const answered = await Promise.race([Promise.all([this.pub.ping(), this.sub.ping()]).then(() => true), late]);
      return answered ? performance.now() - started : null;
    } catch {
      return null; // the connection dropped while asking
    } finally {
      clearTimeout(timer);
    }
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
      await this.pub.del(this.registrationKey(this.gatewayId));
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
