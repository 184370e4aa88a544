import { describe, expect, it } from 'vitest';
import { Harness, fileIdOf, textOf } from '../../test/testHarness';
import { demoWorkspaceFiles } from '../seed/demoWorkspace';
import { parseRecording, writeRecording } from './Recording';
import { maxLiveReplays, ReplayLimitError, Replays, replayIdleMs } from './Replays';
import { SessionRecorder } from './SessionRecorder';

/** Replays hold a room each: their number is bounded, and an unwatched one ends with its workspace. */
describe('replay workspaces are bounded', () => {
  function recorded(h: Harness) {
    const created = h.gateway.createWorkspace('Rec', demoWorkspaceFiles);
    const held = h.gateway.holdRoom(created.workspaceId)!;
    const recorder = new SessionRecorder(held.room, h.clock, 'typing');
    const tab = h.client(created.workspaceId, created.owner.token);
    h.settle(() => tab.status.kind === 'open' && tab.index.synced);
    const fileId = fileIdOf(tab, 'src/index.ts');
    textOf(tab, fileId).insert(0, '// typed\n');
    h.flush();
    const recording = parseRecording(writeRecording(recorder.stop()));
    tab.destroy();
    held.release();
    return recording;
  }

  it(`at most ${maxLiveReplays} live; one nobody watched for ${replayIdleMs / 60_000} minutes is deleted and makes room`, () => {
    const h = new Harness();
    const replays = new Replays(h.gateway, h.clock);
    const recording = recorded(h);
    const made = Array.from({ length: maxLiveReplays }, () => replays.create(recording));
    expect(() => replays.create(recording)).toThrow(ReplayLimitError);
    // One of them is watched; the others are not.
    const watcher = h.client(made[0]!.workspaceId, made[0]!.viewerToken);
    h.settle(() => watcher.status.kind === 'open');
    for (let minute = 0; minute <= replayIdleMs / 60_000; minute++) {
      h.clock.advance(60_000);
      h.flush();
    }
    expect(replays.get(made[0]!.workspaceId)).not.toBeNull();
    expect(replays.get(made[1]!.workspaceId)).toBeNull();
    expect(h.gateway.sessionsIn(made[1]!.workspaceId)).toBe(0);
    const stale = h.client(made[1]!.workspaceId, made[1]!.viewerToken);
    h.settle(() => stale.status.kind === 'closed'); // its workspace is gone: the link opens nothing
    expect(() => replays.create(recording)).not.toThrow();
  });
});
