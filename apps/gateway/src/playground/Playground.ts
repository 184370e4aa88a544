import type { Clock, TimerHandle } from '../core/ports/Clock';
import type { Log } from '../core/ports/Log';

/**
 * Playground mode (issue 37, decision 0032): every visitor gets a fresh workspace copied from a
 * template, with an owner link of their own. Workspaces nobody has open expire after `idleMs`
 * and are deleted with their data; creations are capped per client address per hour, and live
 * workspaces in all. The gateway does the rest as for any workspace (links, Share, budgets).
 */
export interface PlaygroundConfig {
  /** Deleted once no tab has had it open for this long. */
  idleMs: number;
  /** Live playground workspaces at most; a visit beyond it waits for one to expire. */
  maxLive: number;
  /** Workspaces one client address may create per rolling hour. */
  perAddressPerHour: number;
  /** How often expiry is checked. */
  sweepIntervalMs: number;
  /** Each workspace's storage quota, set at the visit; the visitor cannot change it. Default 100 MB. */
  storageQuotaBytes?: number;
}

export const defaultPlaygroundConfig: PlaygroundConfig = {
  idleMs: 30 * 60_000,
  maxLive: 500,
  perAddressPerHour: 10,
  sweepIntervalMs: 60_000,
  storageQuotaBytes: 100 * 1024 * 1024,
};

/** What the playground needs of the gateway: the public face, nothing of its insides. */
export interface PlaygroundPorts {
  createWorkspace(name: string, files: Record<string, string>): { workspaceId: string; owner: { token: string } };
  deleteWorkspace(workspaceId: string): void;
  sessionsIn(workspaceId: string): number;
  /** Sets a workspace's storage quota (the operator's, for each visit). */
  setStorageQuota(workspaceId: string, bytes: number): void;
  meta: { get(key: string): string | null; set(key: string, value: string): void };
}

export type VisitResult =
  | { ok: true; workspaceId: string; token: string }
  | { ok: false; status: 429; retryAfterS: number; message: string };

interface Live {
  createdAt: number;
  /** When a tab last had it open (seen by a sweep), or it was created. */
  activeAt: number;
}

const hourMs = 3_600_000;
/** Which workspaces are the playground's, kept so a restart still expires them. */
const liveKey = 'playground-live';

export class Playground {
  private readonly live = new Map<string, Live>();
  /** Creation times per client address within the last hour. */
  private readonly created = new Map<string, number[]>();
  private timer: TimerHandle | null = null;

  constructor(
    private readonly ports: PlaygroundPorts,
    private readonly template: { name: string; files: Record<string, string> },
    private readonly clock: Clock,
    readonly config: PlaygroundConfig = defaultPlaygroundConfig,
    private readonly log: Log = () => {},
  ) {
    const saved = ports.meta.get(liveKey);
    if (saved) {
      try {
        for (const [id, live] of Object.entries(JSON.parse(saved) as Record<string, Live>)) this.live.set(id, live);
      } catch (error) {
        this.log('warn', 'playground: unreadable list of live workspaces; starting empty', { error: String(error) });
      }
    }
  }

  get liveCount(): number {
    return this.live.size;
  }

  isPlayground(workspaceId: string): boolean {
    return this.live.has(workspaceId);
  }

  /** A new workspace for a visitor from `address`, or a 429 saying when to come back. */
  visit(address: string): VisitResult {
    const now = this.clock.now();
    const recent = (this.created.get(address) ?? []).filter((at) => at > now - hourMs);
    if (recent.length >= this.config.perAddressPerHour) {
      this.created.set(address, recent);
      const retryAfterS = Math.max(1, Math.ceil((recent[0]! + hourMs - now) / 1000));
      return { ok: false, status: 429, retryAfterS, message: `This address has made ${recent.length} playground workspaces in the last hour; try again in ${minutes(retryAfterS)}.` };
    }
    if (this.live.size >= this.config.maxLive) this.sweep();
    if (this.live.size >= this.config.maxLive) {
      const retryAfterS = Math.max(1, Math.ceil(this.nextExpiryMs(now) / 1000));
      return { ok: false, status: 429, retryAfterS, message: `The playground is full (${this.config.maxLive} workspaces); try again in ${minutes(retryAfterS)}.` };
    }
    const created = this.ports.createWorkspace(this.template.name, this.template.files);
    this.ports.setStorageQuota(created.workspaceId, this.config.storageQuotaBytes ?? defaultPlaygroundConfig.storageQuotaBytes!);
    recent.push(now);
    this.created.set(address, recent);
    this.live.set(created.workspaceId, { createdAt: now, activeAt: now });
    this.save();
    return { ok: true, workspaceId: created.workspaceId, token: created.owner.token };
  }

  /** Deletes the workspaces idle past `idleMs`; marks the others active. Returns the deleted ids. */
  sweep(): string[] {
    const now = this.clock.now();
    const expired: string[] = [];
    for (const [id, live] of this.live) {
      if (this.ports.sessionsIn(id) > 0) live.activeAt = now;
      else if (now - live.activeAt >= this.config.idleMs) expired.push(id);
    }
    for (const id of expired) {
      try {
        this.ports.deleteWorkspace(id);
        this.live.delete(id);
      } catch (error) {
        // Kept in the list: the next sweep tries again.
        this.log('error', 'playground: could not delete an expired workspace', { workspaceId: id, error: String(error) });
      }
    }
    for (const [address, times] of this.created) {
      const recent = times.filter((at) => at > now - hourMs);
      if (recent.length === 0) this.created.delete(address);
      else this.created.set(address, recent);
    }
    if (expired.length > 0) {
      this.log('info', 'playground: expired workspaces deleted', { count: expired.length, live: this.live.size });
      this.save();
    }
    return expired;
  }

  start(): void {
    const tick = () => {
      this.sweep();
      this.timer = this.clock.setTimeout(tick, this.config.sweepIntervalMs);
    };
    this.timer = this.clock.setTimeout(tick, this.config.sweepIntervalMs);
  }

  stop(): void {
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  private nextExpiryMs(now: number): number {
    let soonest = this.config.idleMs;
    for (const live of this.live.values()) soonest = Math.min(soonest, Math.max(0, live.activeAt + this.config.idleMs - now));
    return Math.max(soonest, this.config.sweepIntervalMs);
  }

  private save(): void {
    this.ports.meta.set(liveKey, JSON.stringify(Object.fromEntries(this.live)));
  }
}

function minutes(seconds: number): string {
  return seconds < 90 ? `${seconds} s` : `${Math.ceil(seconds / 60)} min`;
}
