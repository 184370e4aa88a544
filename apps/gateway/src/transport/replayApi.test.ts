/**
 * Replay workspaces over REST (issue 37) on a real server: anyone uploads a recording and gets a
 * viewer link and a control secret; the viewer link reads the state and cannot control; the secret
 * plays, pauses, seeks and sets the speed; a malformed recording is a 400 naming its line.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Harness, fileIdOf, textOf } from '../../test/testHarness';
import { writeRecording } from '../recording/Recording';
import { Replays } from '../recording/Replays';
import { SessionRecorder } from '../recording/SessionRecorder';
import { demoWorkspaceFiles } from '../seed/demoWorkspace';
import { startServer, type RunningServer } from './httpServer';
import { createReplayApi } from './replayApi';

let server: RunningServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

describe('replay workspaces over REST', () => {
  it('creates a read-only replay from an upload; only the control secret moves it', async () => {
    const h = new Harness();
    const gateway = h.gateway;
    const created = gateway.createWorkspace('Rec', demoWorkspaceFiles);
    const held = gateway.holdRoom(created.workspaceId)!;
    const recorder = new SessionRecorder(held.room, h.clock, 'typing');
    const tab = h.client(created.workspaceId, created.owner.token);
    h.settle(() => tab.status.kind === 'open' && tab.index.synced);
    const fileId = fileIdOf(tab, 'src/index.ts');
    textOf(tab, fileId);
    h.settle(() => tab.getDoc(fileId)!.synced);
    h.clock.advance(1000);
    textOf(tab, fileId).insert(0, '// typed at one second\n');
    h.flush();
    const text = writeRecording(recorder.stop());
    tab.destroy();
    held.release();

    server = await startServer({ gateway, port: 0, host: '127.0.0.1', webRoot: '/nonexistent-web-root', allowedOrigins: null, publicUrl: null, log: () => {}, routes: [createReplayApi(gateway, new Replays(gateway, h.clock))] });
    const base = `http://127.0.0.1:${server.port}/api/replays`;
    const post = (url: string, body: unknown, token?: string) =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });

    const bad = await post(base, { recording: `${text.split('\n')[0]}\nnot json\n` });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toContain('Line 2');

    const made = await post(base, { recording: text });
    expect(made.status).toBe(201);
    const replay = (await made.json()) as { workspaceId: string; viewerToken: string; controlToken: string; state: { playing: boolean; atMs: number; durationMs: number } };
    expect(replay.state).toMatchObject({ playing: false, atMs: 0 });
    expect(replay.state.durationMs).toBeGreaterThanOrEqual(1000);
    expect(gateway.authenticate(replay.workspaceId, replay.viewerToken)).toMatchObject({ ok: true, link: { role: 'viewer' } });
    // At 0 the file is as the recording began; the secret seeks to the end, where the typing is.
    expect(gateway.document(replay.workspaceId, fileId)!.getText('content').toString()).not.toContain('typed at one second');

    const url = `${base}/${replay.workspaceId}`;
    expect((await post(url, { action: 'play' }, replay.viewerToken)).status).toBe(403);
    const seek = await post(url, { action: 'seek', atMs: replay.state.durationMs }, replay.controlToken);
    expect(seek.status).toBe(200);
    expect(gateway.document(replay.workspaceId, fileId)!.getText('content').toString()).toContain('// typed at one second\n');
    expect((await post(url, { action: 'speed', speed: 3 }, replay.controlToken)).status).toBe(400);
    expect(((await (await post(url, { action: 'speed', speed: 10 }, replay.controlToken)).json()) as { state: { speed: number } }).state.speed).toBe(10);
    const state = await fetch(url, { headers: { authorization: `Bearer ${replay.viewerToken}` } });
    expect(((await state.json()) as { state: { atMs: number; speed: number } }).state).toMatchObject({ atMs: replay.state.durationMs, speed: 10 });
    expect((await fetch(url, { headers: { authorization: 'Bearer nope' } })).status).toBe(403);
  });
});
