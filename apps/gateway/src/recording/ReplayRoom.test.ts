/**
 * A replay workspace (issue 37): a session recorded on a real gateway — typing, a file created and
 * renamed, the demo agent turn streaming into the files, cursors — is played into a new workspace
 * at 2×; every document of the replay's room and of a viewer's tab matches, byte for byte, what the
 * recorded gateway held at several moments, playing forward and after seeking back; the recorded
 * cursors show; a viewer's write is refused; only the control secret moves the replay.
 */
import { turnsOf } from '../core/agent/roomTurns';
import { replayThreadTurn } from '../core/agent/agentExtension';
import { CloseCode, FILE_TEXT_KEY, INDEX_DOC_ID, INDEX_ENTRIES_KEY, THREAD_DOC_ID } from '@flint/protocol';
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { Harness, fileIdOf, hello, insertUpdate, syncStep1Frame, textOf, updateFrame } from '../../test/testHarness';
import { demoTurnRecording } from '../seed/demoTurn';
import { demoWorkspaceFiles } from '../seed/demoWorkspace';
import { parseRecording, writeRecording } from './Recording';
import { ReplayProvider } from './ReplayProvider';
import { Replays } from './Replays';
import { SessionRecorder } from './SessionRecorder';

function contentOf(id: string, doc: Y.Doc): string {
  const vector = Buffer.from(Y.encodeStateVector(doc)).toString('base64');
  if (id === INDEX_DOC_ID) return JSON.stringify([vector, doc.getMap(INDEX_ENTRIES_KEY).toJSON()]);
  // The thread: every root type with content (a type only looked up, empty, is no content).
  if (id === THREAD_DOC_ID) return JSON.stringify([vector, Object.entries(doc.toJSON()).filter(([, v]) => JSON.stringify(v) !== '{}' && JSON.stringify(v) !== '[]')]);
  return JSON.stringify([vector, doc.getText(FILE_TEXT_KEY).toString()]);
}

const nextIo = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('a replay workspace', () => {
  it('plays a recording at 2× into its own workspace, exact at every moment forward and after seeking back; nobody writes', async () => {
    const h = new Harness();
    const created = h.gateway.createWorkspace('Recorded', demoWorkspaceFiles);
    const { workspaceId } = created;
    const held = h.gateway.holdRoom(workspaceId)!;
    const room = held.room;
    const ada = h.client(workspaceId, created.owner.token);
    h.settle(() => ada.status.kind === 'open' && ada.index.synced);

    const recorder = new SessionRecorder(room, h.clock, 'a session');
    const startedAt = h.clock.now();
    const moments: Array<{ t: number; docs: Map<string, string> }> = [];
    const moment = () => {
      const docs = new Map([[INDEX_DOC_ID, contentOf(INDEX_DOC_ID, room.index.doc)], [THREAD_DOC_ID, contentOf(THREAD_DOC_ID, room.thread.doc)]]);
      for (const [fileId, live] of room.loadedFiles()) docs.set(fileId, contentOf(fileId, live.doc));
      moments.push({ t: h.clock.now() - startedAt, docs });
    h.clock.advance(1); // what comes next is after this moment
    };
    const fileId = fileIdOf(ada, 'src/index.ts');
    const text = textOf(ada, fileId);
    h.settle(() => ada.getDoc(fileId)!.synced);
    const handle = ada.getDoc(fileId)!;
    // Typing with the cursor moving: 40 cursor moves 10 ms apart are coalesced (at most one per 50 ms).
    for (let i = 0; i < 40; i++) {
      text.insert(0, i % 8 === 7 ? '\n' : 'x');
      handle.awareness.setLocalStateField('cursor', { anchor: i, head: i });
      h.flush();
      h.clock.advance(10);
    }
    h.flush();
    moment();
    await h.answered(ada.request({ type: 'file.create', path: 'notes/plan.md', kind: 'file' }));
    h.clock.advance(300);
    await h.answered(ada.request({ type: 'file.rename', from: 'notes/plan.md', to: 'notes/plan2.md' }));
    h.flush();
    moment();
    const routed = { provider: new ReplayProvider(demoTurnRecording, h.clock, 1), model: demoTurnRecording.label, contextTokens: 32_000, supportsPrediction: false, supportsTools: true };
    const started = await replayThreadTurn(h.gateway, workspaceId, created.owner.token, 'Ada', demoTurnRecording.prompt, routed);
    expect(started.ok).toBe(true);
    let midTurn = false;
    for (let i = 0; i < 5000 && turnsOf(room).thread; i++) {
      h.clock.advance(25);
      h.flush();
      await nextIo();
      if (!midTurn && i === 20) (moment(), (midTurn = true));
    }
    expect(turnsOf(room).thread).toBeNull();
    h.clock.advance(100);
    h.flush();
    moment();
    const recording = parseRecording(writeRecording(recorder.stop()));
    ada.destroy();
    held.release();

    // Awareness was recorded, coalesced: Ada's 40 moves in 400 ms are at most ~9 frames.
    const cursorFrames = recording.frames.filter((f) => f.ch === 'awareness' && f.doc === fileId && f.state?.includes('cursor'));
    expect(cursorFrames.length).toBeGreaterThan(0);
    expect(cursorFrames.length).toBeLessThanOrEqual(10);

    // The replay: its own workspace; everyone a viewer.
    const replays = new Replays(h.gateway, h.clock);
    const replay = replays.create(recording);
    expect(replay.workspaceId).not.toBe(workspaceId);
    expect(replays.controlled(replay.workspaceId, replay.viewerToken)).toBeNull();
    expect(replays.controlled(replay.workspaceId, replay.controlToken)).toBe(replay.replay);
    // Held: the room stays (the unload timer its creation started must not drop it), its files shown at 0.
    h.clock.advance(10 * 60_000);
    h.flush();
    expect(h.gateway.document(replay.workspaceId, INDEX_DOC_ID)!.getMap(INDEX_ENTRIES_KEY).size).toBeGreaterThan(0);
    expect(h.gateway.isRoomLoaded(replay.workspaceId)).toBe(true);
    const viewer = h.client(replay.workspaceId, replay.viewerToken);
    h.settle(() => viewer.status.kind === 'open' && viewer.index.synced);
    expect(viewer.role).toBe('viewer');

    const replayed = (id: string) => h.gateway.document(replay.workspaceId, id);
    const expectMoment = (m: (typeof moments)[number]) => {
      for (const [id, expected] of m.docs) {
        const doc = replayed(id);
        expect(doc, `document ${id} at ${m.t} ms`).not.toBeNull();
        expect(contentOf(id, doc!), `document ${id} at ${m.t} ms`).toBe(expected);
      }
    };

    replay.replay.setSpeed(2);
    replay.replay.play();
    let playedMs = 0;
    for (const m of moments) {
      // At 2×, the recording's moment m.t comes after m.t / 2 ms of the clock.
      const until = m.t / 2;
      h.clock.advance(until - playedMs);
      playedMs = until;
      h.flush();
      expect(replay.replay.state.atMs).toBe(Math.min(m.t, replay.replay.durationMs));
      expectMoment(m);
    }
    // The viewer's tab follows live: the file's text as recorded at the end.
    const last = moments.at(-1)!;
    viewer.openDoc(fileId);
    h.settle(() => viewer.getDoc(fileId)!.synced);
    h.settle(() => textOf(viewer, fileId).toString() === replayed(fileId)!.getText(FILE_TEXT_KEY).toString());
    expect(textOf(viewer, fileId).toString()).toContain("xxxxxxx\n");
    // The recorded cursor is a remote cursor in the replay's file.
    const states = [...viewer.getDoc(fileId)!.awareness.getStates().values()] as Array<{ cursor?: unknown }>;
    expect(states.some((s) => s.cursor !== undefined)).toBe(true);

    // A write with the replay's viewer link (the presenter's too) is refused whatever the tab
    // sends: the socket closes with Forbidden, the document stays as replayed.
    const before = contentOf(fileId, replayed(fileId)!);
    const raw = h.openRaw();
    hello(raw, replay.workspaceId, replay.viewerToken);
    h.flush();
    raw.client.send(syncStep1Frame(fileId));
    raw.client.send(updateFrame(fileId, insertUpdate('viewer was here')));
    h.flush();
    expect(raw.closeCode).toBe(CloseCode.Forbidden);
    expect(contentOf(fileId, replayed(fileId)!)).toBe(before);
    viewer.destroy();

    // Seeking back: a second viewer's tab is closed with 4205 (the web reloads), and every document is as recorded then.
    const second = h.client(replay.workspaceId, replay.viewerToken);
    h.settle(() => second.status.kind === 'open' && second.index.synced);
    replay.replay.pause();
    for (const m of [moments[1]!, moments[0]!, moments[2]!, last]) {
      replay.replay.seek(m.t);
      h.flush();
      expectMoment(m);
    }
    expect(replay.replay.state.playing).toBe(false);
    // Its socket was closed with 4205, for good (the web reloads the page): it holds the future.
    expect(second.status).toMatchObject({ kind: 'closed', code: CloseCode.Rewound });
    second.destroy();
    replays.forget(replay.workspaceId);
  }, 60_000);
});
