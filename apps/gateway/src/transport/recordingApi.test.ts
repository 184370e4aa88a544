/**
 * Recording over REST (issue 37) on a real server: the owner starts a recording, people type,
 * the owner stops it and downloads a `.flintrec` that replays to what the gateway holds. And a
 * malformed recording is an error naming its line, never a partial one.
 */
import { FILE_TEXT_KEY } from '@flint/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { Harness, fileIdOf, textOf } from '../../test/testHarness';
import { parseRecording, RecordingError } from '../recording/Recording';
import { Recordings } from '../recording/Recordings';
import { Replayer } from '../recording/replayDocs';
import { demoWorkspaceFiles } from '../seed/demoWorkspace';
import { startServer, type RunningServer } from './httpServer';
import { createRecordingApi } from './recordingApi';

let server: RunningServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

describe('recording a workspace', () => {
  it('is started and stopped by the owner, and downloads as a recording that replays to the same files', async () => {
    const h = new Harness();
    const gateway = h.gateway;
    const created = gateway.createWorkspace('Rec', demoWorkspaceFiles);
    const { workspaceId } = created;
    const editor = gateway.share(workspaceId, created.owner.token, { role: 'editor', label: 'e', expiresInMs: null });
    if (!editor.ok) throw new Error(editor.message);
    const recordings = new Recordings((id) => gateway.holdRoom(id), h.clock);
    server = await startServer({ gateway, port: 0, host: '127.0.0.1', webRoot: '/nonexistent-web-root', allowedOrigins: null, publicUrl: null, log: () => {}, routes: [createRecordingApi(gateway, recordings)] });
    const call = (method: string, token: string) =>
      fetch(`http://127.0.0.1:${server!.port}/api/workspaces/${workspaceId}/recording`, { method, headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` } });

    expect((await call('POST', editor.value.token)).status).toBe(403);
    expect((await call('POST', created.owner.token)).status).toBe(201);
    const startedAt = h.clock.now();
    expect((await call('POST', created.owner.token)).status).toBe(409);

    const tab = h.client(workspaceId, editor.value.token);
    h.settle(() => tab.status.kind === 'open' && tab.index.synced);
    const fileId = fileIdOf(tab, 'src/index.ts');
    const text = textOf(tab, fileId);
    h.settle(() => tab.getDoc(fileId)!.synced);
    const typedAt: number[] = [];
    for (const line of ['// one\n', '// two\n', '// three\n']) {
      typedAt.push(h.clock.now() - startedAt);
      text.insert(0, line);
      h.flush();
      h.clock.advance(500);
    }
    const status = (await (await call('GET', editor.value.token)).json()) as { recording: boolean; frames: number };
    expect(status.recording).toBe(true);
    expect(status.frames).toBeGreaterThanOrEqual(6); // index, thread, the file's state, three edits

    expect((await call('DELETE', editor.value.token)).status).toBe(403);
    const download = await call('DELETE', created.owner.token);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-disposition')).toContain('.flintrec');
    const recording = parseRecording(await download.text());
    const replayer = new Replayer(recording);
    const expected = gateway.document(workspaceId, fileId)!.getText(FILE_TEXT_KEY).toString();
    expect(expected.startsWith('// three\n// two\n// one\n')).toBe(true);
    expect(replayer.seek(replayer.durationMs).get(fileId)!.getText(FILE_TEXT_KEY).toString()).toBe(expected);
    // Just before the third line was typed, it had the first two; scrubbing back to before the first, none.
    const before = (t: number) => replayer.seek(t).get(fileId)!.getText(FILE_TEXT_KEY).toString();
    expect(before(typedAt[2]! - 1).startsWith('// two\n// one\n')).toBe(true);
    // (The file was first loaded when the tab opened it, at the time of the first edit at the latest.)
    const first = replayer.seek(typedAt[0]! - 1).get(fileId);
    expect(first === undefined || first.getText(FILE_TEXT_KEY).toString() === demoWorkspaceFiles['src/index.ts']).toBe(true);
    expect(before(typedAt[2]!)).toBe(expected);
    // Stopped: no longer recording; typing now is not in it.
    expect(((await (await call('GET', created.owner.token)).json()) as { recording: boolean }).recording).toBe(false);
    tab.destroy();
  });

  it('refuses a malformed recording with the line at fault', () => {
    const header = JSON.stringify({ format: 'flint-recording', version: 1, title: 't', prompt: '', label: 'l' });
    const cases: Array<[string, RegExp]> = [
      ['', /empty/],
      ['not json', /Line 1/],
      [JSON.stringify({ format: 'other' }), /not a Flint recording/],
      [JSON.stringify({ format: 'flint-recording', version: 2 }), /version 2/],
      [`${header}\n${JSON.stringify({ t: 5, ch: 'update', doc: 'd', data: 'AA==' })}\n${JSON.stringify({ t: 4, ch: 'update', doc: 'd', data: 'AA==' })}`, /Line 3/],
      [`${header}\n${JSON.stringify({ t: 1, ch: 'update', doc: 'd', data: '%%' })}`, /Line 2: an update frame/],
      [`${header}\n${JSON.stringify({ t: 1, ch: 'model', answer: 0, event: { type: 'nope' } })}`, /Line 2: a model frame/],
    ];
    for (const [text, message] of cases) {
      expect(() => parseRecording(text)).toThrow(RecordingError);
      expect(() => parseRecording(text)).toThrow(message);
    }
    // Channels a reader does not know are skipped, not refused.
    expect(parseRecording(`${header}\n${JSON.stringify({ t: 1, ch: 'terminal', term: 't' })}`).frames).toEqual([]);
    // Awareness is a channel now (cursors): one without its client and state is refused.
    expect(() => parseRecording(`${header}\n${JSON.stringify({ t: 1, ch: 'awareness', doc: 'd' })}`)).toThrow('Line 2: an awareness frame');
  });
});
