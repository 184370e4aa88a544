/**
 * A recording's memory is bounded at record time (issue 37): the frame and byte caps are checked
 * as each frame is kept, so a recording nobody polls still stops at its cap, says why in its
 * status, and keeps what it had; a stopped recording is dropped once downloaded, or after a
 * while if never downloaded. Real gateway and tabs (Harness), fake clock.
 */
import { FILE_TEXT_KEY } from '@flint/protocol';
import { expect, it } from 'vitest';
import { Harness, fileIdOf, textOf } from '../../test/testHarness';
import { Recordings } from './Recordings';
import { demoWorkspaceFiles } from '../seed/demoWorkspace';

function typing(limits: ConstructorParameters<typeof Recordings>[2]) {
  const h = new Harness();
  const gateway = h.gateway;
  const created = gateway.createWorkspace('Rec', demoWorkspaceFiles);
  const { workspaceId } = created;
  const recordings = new Recordings((id) => gateway.holdRoom(id), h.clock, limits);
  expect(recordings.start(workspaceId, 'r')).toBe('started');
  const tab = h.client(workspaceId, created.owner.token);
  h.settle(() => tab.status.kind === 'open' && tab.index.synced);
  const fileId = fileIdOf(tab, 'src/index.ts');
  const text = textOf(tab, fileId);
  h.settle(() => tab.getDoc(fileId)!.synced);
  const type = (line: (i: number) => string, times: number) => {
    for (let i = 0; i < times; i++) {
      text.insert(0, line(i));
      h.flush();
      h.clock.advance(10);
    }
  };
  const gatewayText = () => gateway.document(workspaceId, fileId)!.getText(FILE_TEXT_KEY).toString();
  return { h, recordings, workspaceId, type, gatewayText, tab };
}

it('a recording past its frame cap stops itself even when nobody asks for its status', async () => {
  const maxFrames = 20;
  const { recordings, workspaceId, type, gatewayText, tab } = typing({ maxFrames });
  type((i) => `// line ${i}\n`, 200);
  expect(gatewayText()).toContain('// line 199');
  await Promise.resolve(); // the room is let go of after the update that reached the cap
  const status = recordings.status(workspaceId);
  expect(status.recording).toBe(false);
  expect(status.stoppedBecause).toMatch(/limit of 20 changes/);
  const recording = recordings.stop(workspaceId)!;
  expect(recording.frames.length).toBeLessThanOrEqual(maxFrames);
  expect(recording.frames.length).toBeGreaterThan(3);
  tab.destroy();
});

it('a recording past its byte cap stops itself, and the status says why', () => {
  const maxBytes = 64 * 1024;
  const { recordings, workspaceId, type, tab } = typing({ maxBytes });
  type((i) => `${String(i).padStart(4, '0')}${'x'.repeat(8 * 1024)}\n`, 40);
  const status = recordings.status(workspaceId);
  expect(status.recording).toBe(false);
  expect(status.stoppedBecause).toMatch(/limit of/);
  const recording = recordings.stop(workspaceId)!;
  const bytes = recording.frames.reduce((sum, frame) => sum + (frame.ch === 'update' ? frame.data.length : 0), 0);
  expect(bytes).toBeLessThanOrEqual(maxBytes);
  expect(recording.frames.length).toBeGreaterThan(3);
  tab.destroy();
});

it('a stopped recording is dropped once downloaded, or after keepStoppedMs when it never is', () => {
  const { h, recordings, workspaceId, type, tab } = typing({ keepStoppedMs: 60_000 });
  type((i) => `// ${i}\n`, 3);
  const taken = recordings.take(workspaceId);
  expect(taken!.frames.length).toBeGreaterThan(3);
  expect(recordings.stop(workspaceId)).toBeNull();
  expect(recordings.status(workspaceId)).toMatchObject({ recording: false, frames: 0, stoppedBecause: null });

  expect(recordings.start(workspaceId, 'again')).toBe('started');
  type((i) => `// again ${i}\n`, 3);
  expect(recordings.stop(workspaceId)).not.toBeNull();
  h.clock.advance(59_000);
  expect(recordings.stop(workspaceId)).not.toBeNull(); // still there to download
  h.clock.advance(1_000);
  expect(recordings.stop(workspaceId)).toBeNull();
  tab.destroy();
});
