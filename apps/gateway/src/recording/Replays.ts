import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../core/ports/Clock';
import type { Recording } from './Recording';
import { ReplayRoom, type ReplayHost } from './ReplayRoom';

const hash = (token: string) => createHash('sha256').update(token).digest();

/** Replays live at once on one gateway: each holds its room (and its recording) in memory. */
export const maxLiveReplays = 16;
/** A replay nobody has watched for this long is deleted with its workspace. */
export const replayIdleMs = 15 * 60_000;
const sweepEveryMs = 60_000;

/** Too many replays are live: the caller answers 429 and tries later. */
export class ReplayLimitError extends Error {}

/** What creating a replay gives: its workspace, a viewer link for everyone, the presenter's control secret. */
export interface CreatedReplay {
  workspaceId: string;
  viewerToken: string;
  controlToken: string;
  replay: ReplayRoom;
}

/**
 * The replay workspaces of this gateway (issue 37, decision 0035). A replay's workspace gets an
 * owner link (the gateway makes one for every workspace) that nobody is given, and one viewer
 * link handed to everyone, presenter included: no one can write, by the gateway's role checks.
 * Playback is controlled with a separate secret, the presenter's; it opens nothing else.
 */
export class Replays {
  private readonly replays = new Map<string, { replay: ReplayRoom; control: Buffer; watchedAt: number }>();
  private sweep: ReturnType<Clock['setTimeout']> | null = null;

  constructor(
    private readonly gateway: ReplayHost & {
      createWorkspace(name: string): { workspaceId: string; owner: { token: string } };
      share(workspaceId: string, token: string, request: { role: 'viewer'; label: string; expiresInMs: null }): { ok: true; value: { token: string } } | { ok: false; message: string };
      sessionsIn(workspaceId: string): number;
      deleteWorkspace(workspaceId: string): void;
    },
    private readonly clock: Pick<Clock, 'now' | 'setTimeout' | 'clearTimeout'>,
  ) {}

  create(recording: Recording): CreatedReplay {
    this.sweepIdle();
    if (this.replays.size >= maxLiveReplays) throw new ReplayLimitError(`${maxLiveReplays} replays are live on this gateway; try again once one has ended (an unwatched replay ends after ${replayIdleMs / 60_000} minutes).`);
    const { workspaceId, owner } = this.gateway.createWorkspace(`Replay: ${recording.title}`.slice(0, 100));
    const viewer = this.gateway.share(workspaceId, owner.token, { role: 'viewer', label: 'Replay viewer', expiresInMs: null });
    if (!viewer.ok) throw new Error(`replay: no viewer link: ${viewer.message}`);
    const controlToken = randomBytes(24).toString('base64url');
    const replay = new ReplayRoom(workspaceId, recording, this.gateway, this.clock);
    this.replays.set(workspaceId, { replay, control: hash(controlToken), watchedAt: this.clock.now() });
    this.scheduleSweep();
    return { workspaceId, viewerToken: viewer.value.token, controlToken, replay };
  }

  get(workspaceId: string): ReplayRoom | null {
    return this.replays.get(workspaceId)?.replay ?? null;
  }

  /** The replay, if `token` is its control secret. */
  controlled(workspaceId: string, token: string): ReplayRoom | null {
    const entry = this.replays.get(workspaceId);
    if (!entry) return null;
    const given = hash(token);
    return timingSafeEqual(given, entry.control) ? entry.replay : null;
  }

  /** Stops a replay (its workspace was deleted). */
  forget(workspaceId: string): void {
    this.replays.get(workspaceId)?.replay.close();
    this.replays.delete(workspaceId);
  }

  /** Replays nobody watched for `replayIdleMs` end, and their workspaces are deleted with their data. */
  sweepIdle(): void {
    const now = this.clock.now();
    for (const [workspaceId, entry] of [...this.replays]) {
      if (this.gateway.sessionsIn(workspaceId) > 0) entry.watchedAt = now;
      else if (now - entry.watchedAt >= replayIdleMs) {
        this.forget(workspaceId);
        this.gateway.deleteWorkspace(workspaceId);
      }
    }
  }

  private scheduleSweep(): void {
    if (this.sweep !== null) return;
    this.sweep = this.clock.setTimeout(() => {
      this.sweep = null;
      this.sweepIdle();
      if (this.replays.size > 0) this.scheduleSweep();
    }, sweepEveryMs);
  }
}
