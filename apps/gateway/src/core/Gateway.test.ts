import { FILE_TEXT_KEY, INDEX_ENTRIES_KEY, type IndexEntry } from '@flint/protocol';
import { describe, expect, it } from 'vitest';
import { demoWorkspaceFiles } from '../seed/demoWorkspace';
import { fileIdOf, Harness, textOf } from '../../test/testHarness';

function setup(files: Record<string, string> = { 'src/a.ts': 'export const a = 1;\n' }) {
  const h = new Harness();
  const ws = h.gateway.createWorkspace('Test', files);
  const editorLink = h.gateway.links.create(ws.workspaceId, 'editor', 'Editor', null);
  const viewerLink = h.gateway.links.create(ws.workspaceId, 'viewer', 'Viewer', null);
  return { h, ws, workspaceId: ws.workspaceId, ownerToken: ws.owner.token, editorToken: editorLink.token, viewerToken: viewerLink.token };
}

describe('Gateway: collaboration', () => {
  it('seeds files on the server and serves them to a client', () => {
    const { h, workspaceId, ownerToken } = setup(demoWorkspaceFiles);
    const client = h.client(workspaceId, ownerToken);
    h.flush();
    expect(client.status).toMatchObject({ kind: 'open', role: 'owner', workspaceName: 'Test' });
    const paths = [...client.index.doc.getMap<IndexEntry>(INDEX_ENTRIES_KEY).keys()].sort();
    expect(paths).toEqual(Object.keys(demoWorkspaceFiles).sort());
    const text = textOf(client, fileIdOf(client, 'src/index.ts'));
    h.flush();
    expect(text.toString()).toBe(demoWorkspaceFiles['src/index.ts']);
  });

  it('relays edits between two sessions on the same file, both ways', () => {
    const { h, workspaceId, ownerToken, editorToken } = setup();
    const alice = h.client(workspaceId, ownerToken);
    const bob = h.client(workspaceId, editorToken);
    h.flush();
    const fileId = fileIdOf(alice, 'src/a.ts');
    const aliceText = textOf(alice, fileId);
    const bobText = textOf(bob, fileId);
    h.flush();
    aliceText.insert(0, '// alice\n');
    bobText.insert(bobText.length, '// bob\n');
    h.flush();
    expect(aliceText.toString()).toBe('// alice\nexport const a = 1;\n// bob\n');
    expect(bobText.toString()).toBe(aliceText.toString());
  });

  it('a viewer receives edits live', () => {
    const { h, workspaceId, editorToken, viewerToken } = setup();
    const editor = h.client(workspaceId, editorToken);
    const viewer = h.client(workspaceId, viewerToken);
    h.flush();
    const fileId = fileIdOf(editor, 'src/a.ts');
    const viewerText = textOf(viewer, fileId);
    const editorText = textOf(editor, fileId);
    h.flush();
    editorText.insert(0, 'x');
    h.flush();
    expect(viewer.role).toBe('viewer');
    expect(viewerText.toString()).toBe('xexport const a = 1;\n');
  });

  it('relays awareness (cursors, names) and removes a session\'s state when it leaves', () => {
    const { h, workspaceId, ownerToken, editorToken } = setup();
    const alice = h.client(workspaceId, ownerToken);
    const bob = h.client(workspaceId, editorToken);
    h.flush();
    const fileId = fileIdOf(alice, 'src/a.ts');
    const aliceDoc = alice.openDoc(fileId);
    const bobDoc = bob.openDoc(fileId);
    h.flush();
    aliceDoc.awareness.setLocalStateField('user', { name: 'Alice', color: '#f00' });
    h.flush();
    expect(bobDoc.awareness.getStates().get(aliceDoc.doc.clientID)).toMatchObject({ user: { name: 'Alice' } });
    alice.destroy();
    h.flush();
    expect(bobDoc.awareness.getStates().has(aliceDoc.doc.clientID)).toBe(false);
  });

  it('file operations change the tree for everyone and keep file contents across renames', async () => {
    const { h, workspaceId, ownerToken, editorToken } = setup();
    const alice = h.client(workspaceId, ownerToken);
    const bob = h.client(workspaceId, editorToken);
    h.flush();
    const entries = () => [...bob.index.doc.getMap<IndexEntry>(INDEX_ENTRIES_KEY).keys()].sort();
    const created = alice.request({ type: 'file.create', path: 'src/lib/b.ts', kind: 'file' });
    h.flush();
    await expect(created).resolves.toEqual({ ok: true });
    const folder = alice.request({ type: 'file.create', path: 'docs', kind: 'folder' });
    h.flush();
    await expect(folder).resolves.toEqual({ ok: true });
    const fileId = fileIdOf(alice, 'src/a.ts');
    const moved = alice.request({ type: 'file.rename', from: 'src', to: 'lib/src' });
    h.flush();
    await expect(moved).resolves.toEqual({ ok: true });
    expect(entries()).toEqual(['docs', 'lib/src/a.ts', 'lib/src/lib/b.ts']);
    expect(fileIdOf(bob, 'lib/src/a.ts')).toBe(fileId);
    const deleted = bob.request({ type: 'file.delete', path: 'lib' });
    h.flush();
    await expect(deleted).resolves.toEqual({ ok: true });
    expect(entries()).toEqual(['docs']);
  });

  it('refuses bad paths, duplicates and too many files with a typed error', async () => {
    const h = new Harness(undefined, { limits: { maxFiles: 2, maxFrameBytes: 1 << 20, maxDocBytes: 1 << 20, maxMessagesPerSecond: 1000 } });
    const ws = h.gateway.createWorkspace('Small', { 'a.ts': '' });
    const client = h.client(ws.workspaceId, ws.owner.token);
    h.flush();
    const ask = async (path: string) => {
      const result = client.request({ type: 'file.create', path, kind: 'file' });
      h.flush();
      return result;
    };
    await expect(ask('../etc/passwd')).resolves.toMatchObject({ ok: false, code: 'invalid_path' });
    await expect(ask('/abs.ts')).resolves.toMatchObject({ ok: false, code: 'invalid_path' });
    await expect(ask('bad\u0007name.ts')).resolves.toMatchObject({ ok: false, code: 'invalid_path' });
    await expect(ask('a.ts')).resolves.toMatchObject({ ok: false, code: 'exists' });
    await expect(ask('a.ts/inside.ts')).resolves.toMatchObject({ ok: false, code: 'invalid_path' });
    await expect(ask('b.ts')).resolves.toEqual({ ok: true });
    await expect(ask('c.ts')).resolves.toMatchObject({ ok: false, code: 'too_many_files' });
  });

  it('unloads an idle room and reloads it from storage with nothing lost or duplicated', () => {
    const { h, workspaceId, ownerToken } = setup();
    const client = h.client(workspaceId, ownerToken);
    h.flush();
    const fileId = fileIdOf(client, 'src/a.ts');
    const text = textOf(client, fileId);
    h.flush();
    text.insert(0, 'let kept = true;\n');
    h.flush();
    client.destroy();
    h.flush();
    expect(h.gateway.isRoomLoaded(workspaceId)).toBe(true);
    h.clock.advance(h.gateway.config.idleUnloadMs);
    expect(h.gateway.isRoomLoaded(workspaceId)).toBe(false);
    const again = h.client(workspaceId, ownerToken);
    h.flush();
    const reloaded = textOf(again, fileId);
    h.flush();
    expect(reloaded.toString()).toBe('let kept = true;\nexport const a = 1;\n');
  });

  it('a client that edits while the gateway restarts converges after reconnecting', () => {
    const { h, workspaceId, ownerToken, editorToken } = setup();
    const alice = h.client(workspaceId, ownerToken);
    const bob = h.client(workspaceId, editorToken);
    h.flush();
    const fileId = fileIdOf(alice, 'src/a.ts');
    const aliceText = textOf(alice, fileId);
    const bobText = textOf(bob, fileId);
    h.flush();
    h.restart();
    aliceText.insert(0, 'A');
    bobText.insert(bobText.length, 'B');
    h.settle(() => alice.status.kind === 'open' && bob.status.kind === 'open');
    h.flush();
    expect(aliceText.toString()).toBe('Aexport const a = 1;\nB');
    expect(bobText.toString()).toBe(aliceText.toString());
    expect(aliceText.toString().match(/export/g)).toHaveLength(1);
  });

  it('a tab that opens a file just as someone deletes it keeps its connection (found by the folder property test)', async () => {
    const { h, workspaceId, ownerToken, editorToken } = setup({ 'a.ts': 'a', 'b.ts': 'b' });
    const alice = h.client(workspaceId, ownerToken);
    const bob = h.client(workspaceId, editorToken);
    h.flush();
    const doomed = fileIdOf(bob, 'a.ts');
    void alice.request({ type: 'file.delete', path: 'a.ts' });
    bob.openDoc(doomed); // its index does not know yet: sync step 1 and awareness go out
    bob.openDoc(doomed).awareness.setLocalStateField('user', { name: 'Bob' });
    h.flush();
    expect(bob.status.kind).toBe('open');
    const b = textOf(bob, fileIdOf(bob, 'b.ts'));
    h.flush();
    expect(b.toString()).toBe('b');
  });

  it('answers ping with pong so the client knows its round-trip time', () => {
    const { h, workspaceId, ownerToken } = setup();
    const client = h.client(workspaceId, ownerToken);
    h.flush();
    h.clock.advance(0);
    h.flush();
    expect(client.rttMs).toBe(0);
  });
});

describe('Gateway: storage', () => {
  it('compacts a document after many updates, keeping its content', () => {
    const h = new Harness(undefined, { compactEveryUpdates: 10 });
    const ws = h.gateway.createWorkspace('C', { 'a.ts': '' });
    const client = h.client(ws.workspaceId, ws.owner.token);
    h.flush();
    const fileId = fileIdOf(client, 'a.ts');
    const text = textOf(client, fileId);
    h.flush();
    for (let i = 0; i < 25; i++) {
      text.insert(text.length, String(i % 10));
      h.flush();
    }
    expect(h.gateway.metrics.counter('flint_doc_compactions_total')).toBeGreaterThan(0);
    const stored = h.store.loadDoc(`${ws.workspaceId}/${fileId}`);
    expect(stored.updates.length).toBeLessThan(10);
    h.restart();
    const again = h.client(ws.workspaceId, ws.owner.token);
    h.flush();
    const reread = again.openDoc(fileId).doc.getText(FILE_TEXT_KEY);
    h.flush();
    expect(reread.toString()).toBe('0123456789012345678901234');
  });
});

describe('Gateway: workspace names', () => {
  it('a workspace name loses control, bidi-override and invisible characters; an empty one gets a default', () => {
    const h = new Harness();
    const named = h.gateway.createWorkspace('\u202Egnp.exe\u0000 My\u0007  project\u200B');
    expect(h.store.getWorkspace(named.workspaceId)!.name).toBe('gnp.exe My project');
    const empty = h.gateway.createWorkspace('\u0000\u202E');
    expect(h.store.getWorkspace(empty.workspaceId)!.name).toBe('Untitled workspace');
  });
});
