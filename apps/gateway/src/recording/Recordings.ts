import type { Clock } from '../core/ports/Clock';
import type { Room } from '../core/Room';
import type { Recording } from './Recording';
import { SessionRecorder } from './SessionRecorder';

/**
 * The recordings running on this gateway, one per workspace at most (issue 37). A recording holds
 * its room loaded (its documents must stay the ones it follows) until it is stopped; one that
 * reaches `maxFrames` stops itself and keeps what it has.
 */
export class Recordings {
  private readonly running = new Map<string, { recorder: SessionRecorder; release(): void; startedAt: number }>();
  private readonly finished = new Map<string, Recording>();

  constructor(
    private readonly hold: (workspaceId: string) => { room: Room; release(): void } | null,
    private readonly clock: Pick<Clock, 'now' | 'setTimeout' | 'clearTimeout'>,
    private readonly maxFrames = 1_000_000,
  ) {}

  start(workspaceId: string, title: string): 'started' | 'already' | 'no-workspace' {
    if (this.running.has(workspaceId)) return 'already';
    const held = this.hold(workspaceId);
    if (!held) return 'no-workspace';
    this.finished.delete(workspaceId);
    this.running.set(workspaceId, { recorder: new SessionRecorder(held.room, this.clock, title), release: held.release, startedAt: this.clock.now() });
    return 'started';
  }

  status(workspaceId: string): { recording: boolean; frames: number; startedAt: number | null } {
    const running = this.running.get(workspaceId);
    if (running && running.recorder.frameCount >= this.maxFrames) this.stop(workspaceId);
    const now = this.running.get(workspaceId);
    return { recording: now !== undefined, frames: now?.recorder.frameCount ?? this.finished.get(workspaceId)?.frames.length ?? 0, startedAt: now?.startedAt ?? null };
  }

  /** Stops the workspace's recording; the recording, or the last one stopped (to download again); null if none. */
  stop(workspaceId: string): Recording | null {
    const running = this.running.get(workspaceId);
    if (running) {
      this.running.delete(workspaceId);
      this.finished.set(workspaceId, running.recorder.stop());
      running.release();
    }
    return this.finished.get(workspaceId) ?? null;
  }

  /** Drops what is kept for a workspace (it was deleted). */
  forget(workspaceId: string): void {
    this.stop(workspaceId);
    this.finished.delete(workspaceId);
  }
}
