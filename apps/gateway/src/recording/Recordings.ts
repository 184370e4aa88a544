import type { Clock, TimerHandle } from '../core/ports/Clock';
import type { Room } from '../core/Room';
import type { Recording } from './Recording';
import { SessionRecorder } from './SessionRecorder';

/** What a recording may hold, and how long a stopped one waits for its download. */
export interface RecordingLimits {
  maxFrames: number;
  /** The frames' payload (base64 text), in bytes. */
  maxBytes: number;
  /** A recording stopped and not downloaded is dropped after this long. */
  keepStoppedMs: number;
}

export const defaultRecordingLimits: RecordingLimits = { maxFrames: 1_000_000, maxBytes: 256 * 1024 * 1024, keepStoppedMs: 15 * 60_000 };

/**
 * The recordings running on this gateway, one per workspace at most (issue 37). A recording holds
 * its room loaded (its documents must stay the ones it follows) until it is stopped. The caps are
 * enforced as each frame is kept: one that reaches `maxFrames` or `maxBytes` stops itself at once,
 * keeps what it has, and says why in its status. A stopped recording is kept for its download
 * (`take`), and dropped once downloaded or `keepStoppedMs` after it stopped.
 */
export class Recordings {
  private readonly running = new Map<string, { recorder: SessionRecorder; release(): void; startedAt: number }>();
  private readonly finished = new Map<string, { recording: Recording; reason: string | null; timer: TimerHandle }>();
  private readonly limits: RecordingLimits;

  constructor(
    private readonly hold: (workspaceId: string) => { room: Room; release(): void } | null,
    private readonly clock: Pick<Clock, 'now' | 'setTimeout' | 'clearTimeout'>,
    limits: number | Partial<RecordingLimits> = {},
  ) {
    this.limits = { ...defaultRecordingLimits, ...(typeof limits === 'number' ? { maxFrames: limits } : limits) };
  }

  start(workspaceId: string, title: string): 'started' | 'already' | 'no-workspace' {
    if (this.running.has(workspaceId)) return 'already';
    const held = this.hold(workspaceId);
    if (!held) return 'no-workspace';
    this.drop(workspaceId);
    const { maxFrames, maxBytes } = this.limits;
    // Reached inside a document's update: the room is let go of after that update is done.
    const onFull = () => queueMicrotask(() => this.running.get(workspaceId)?.recorder === recorder && this.stop(workspaceId));
    const recorder = new SessionRecorder(held.room, this.clock, title, { maxFrames, maxBytes, onFull });
    this.running.set(workspaceId, { recorder, release: held.release, startedAt: this.clock.now() });
    return 'started';
  }

  /** Whether it records, how many frames, and why it stopped itself (a cap), if it did. */
  status(workspaceId: string): { recording: boolean; frames: number; startedAt: number | null; stoppedBecause: string | null } {
    const running = this.running.get(workspaceId);
    if (running?.recorder.full) this.stop(workspaceId);
    const now = this.running.get(workspaceId);
    const finished = this.finished.get(workspaceId);
    return {
      recording: now !== undefined,
      frames: now?.recorder.frameCount ?? finished?.recording.frames.length ?? 0,
      startedAt: now?.startedAt ?? null,
      stoppedBecause: now ? null : (finished?.reason ?? null),
    };
  }

  /** Stops the workspace's recording; the recording, or the last one stopped and not yet dropped; null if none. */
  stop(workspaceId: string): Recording | null {
    const running = this.running.get(workspaceId);
    if (running) {
      this.running.delete(workspaceId);
      const recording = running.recorder.stop();
      const timer = this.clock.setTimeout(() => this.finished.get(workspaceId)?.timer === timer && this.finished.delete(workspaceId), this.limits.keepStoppedMs);
      this.finished.set(workspaceId, { recording, reason: running.recorder.full, timer });
      running.release();
    }
    return this.finished.get(workspaceId)?.recording ?? null;
  }

  /** Stops the recording and hands it over for download: the gateway keeps no copy after. */
  take(workspaceId: string): Recording | null {
    const recording = this.stop(workspaceId);
    this.drop(workspaceId);
    return recording;
  }

  /** Drops what is kept for a workspace (it was deleted). */
  forget(workspaceId: string): void {
    this.stop(workspaceId);
    this.drop(workspaceId);
  }

  private drop(workspaceId: string): void {
    const finished = this.finished.get(workspaceId);
    if (!finished) return;
    this.clock.clearTimeout(finished.timer);
    this.finished.delete(workspaceId);
  }
}
