import type { FlintClient } from '@flint/client';
import type { SearchQuery } from '@flint/protocol';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NodeDisk } from '../../project/NodeDisk';
import { FolderSync } from '../../project/FolderSync';
import { fileIdOf, Harness, textOf } from '../../../test/testHarness';

const query = (pattern: string, options: Partial<SearchQuery> = {}): SearchQuery => ({ pattern, regex: false, matchCase: false, wholeWord: false, include: '', exclude: '', ...options });

function setup(files: Record<string, string>) {
  const h = new Harness();
  const ws = h.gateway.createWorkspace('Search', files);
  const viewer = h.gateway.links.create(ws.workspaceId, 'viewer', 'Viewer', null);
  const owner = h.client(ws.workspaceId, ws.owner.token);
  h.flush();
  return { h, ws, owner, viewerToken: viewer.token };
}

/** Flushes the sockets and lets the search's slices run (they yield through the fake clock). */
async function settled<T>(h: Harness, result: Promise<T>): Promise<T> {
  let done = false;
  void result.then(() => (done = true));
  for (let i = 0; i < 10_000 && !done; i++) {
    h.flush();
    h.clock.advance(0);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return result;
}

const search = (h: Harness, client: FlintClient, q: SearchQuery) => settled(h, client.search(q));

describe('search across files ([P36]–[P38])', () => {
  it('[P36] groups matches by file in path order, with line, range and preview', async () => {
    const { h, owner } = setup({ 'b.ts': 'const Foo = 1;\nfoo(foo);\n', 'a.ts': 'no match\nFOO\n', 'c.md': 'nothing' });
    const found = await search(h, owner, query('foo'));
    expect(found).toMatchObject({ type: 'search.result', total: 4, shown: 4, filesSearched: 3, stoppedAt: null });
    if (!('files' in found)) throw new Error('no result');
    expect(found.files.map((f) => [f.path, f.matches.map((m) => [m.line, m.start, m.end])])).toEqual([
      ['a.ts', [[1, 0, 3]]],
      ['b.ts', [[0, 6, 9], [1, 0, 3], [1, 4, 7]]],
    ]);
    expect(found.files[1]!.matches[0]).toMatchObject({ preview: 'const Foo = 1;', previewFrom: 0 });
  });

  it('[P36] match case, whole word, regex and include/exclude globs narrow the search', async () => {
    const { h, owner } = setup({ 'src/a.ts': 'foo foobar Foo\n', 'src/deep/b.ts': 'foo\n', 'test/a.test.ts': 'foo\n', 'README.md': 'foo\n' });
    const count = async (q: SearchQuery) => {
      const found = await search(h, owner, q);
      return 'files' in found ? found.files.map((f) => `${f.path}:${f.matches.length}`) : found;
    };
    expect(await count(query('foo', { matchCase: true, wholeWord: true, include: 'src' }))).toEqual(['src/a.ts:1', 'src/deep/b.ts:1']);
    expect(await count(query('fo+(bar)?', { regex: true, include: '*.ts', exclude: 'test/**' }))).toEqual(['src/a.ts:3', 'src/deep/b.ts:1']);
    expect(await count(query('foo', { include: '*.{md,ts}', exclude: '*.test.ts, src/deep' }))).toEqual(['README.md:1', 'src/a.ts:3']);
  });

  it('[P36] a catastrophic pattern answers at once (RE2, linear); an invalid one is refused with a sentence', async () => {
    const { h, owner } = setup({ 'a.txt': `${'a'.repeat(28)}!\n`.repeat(200), 'b.txt': 'aaa\n' });
    const found = await search(h, owner, query('(a+)+$', { regex: true }));
    expect(found).toMatchObject({ type: 'search.result', total: 1, files: [{ path: 'b.txt' }] });
    expect(await search(h, owner, query('(a)\\1', { regex: true }))).toMatchObject({ ok: false, code: 'invalid_message', message: expect.stringMatching(/no backreferences/) });
  });

  it('[P36] [I6] a long search yields between slices: another session\'s keystroke is relayed before it answers', async () => {
    const big = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`f${i}.txt`, `${'ab'.repeat(500)}\n`.repeat(100)]));
    const { h, ws, owner } = setup({ ...big, 'note.md': '' });
    const bob = h.client(ws.workspaceId, ws.owner.token);
    h.flush();
    const noteId = fileIdOf(owner, 'note.md');
    const seen = textOf(owner, noteId);
    const typed = textOf(bob, noteId);
    h.flush();
    let answered = false;
    const pending = owner.search(query('(a|b)+c', { regex: true })).then((answer) => ((answered = true), answer));
    h.flush(); // the search starts and runs its first slice, then waits for I/O
    typed.insert(0, 'k');
    h.flush();
    expect(seen.toString()).toBe('k');
    expect(answered).toBe(false);
    expect(await settled(h, pending)).toMatchObject({ type: 'search.result', total: 0, stoppedAt: null });
  });

  it('[P36] counts the matches it cut: at most 2,000 are sent', async () => {
    const { h, owner } = setup({ 'many.txt': 'x\n'.repeat(2500) });
    expect(await search(h, owner, query('x'))).toMatchObject({ total: 2500, shown: 2000 });
  });

  it('[P37] replace writes one transaction per file, seen live by collaborators; a regex replacement expands groups', async () => {
    const { h, ws, owner } = setup({ 'a.ts': 'let oldName = 1;\noldName++;\n', 'b.ts': 'use(oldName);\n', 'c.ts': 'oldName\n' });
    const bob = h.client(ws.workspaceId, ws.owner.token);
    h.flush();
    const bText = textOf(bob, fileIdOf(bob, 'b.ts'));
    h.flush();
    const updates: number[] = [];
    bText.doc!.on('update', () => updates.push(1));
    const q = query('old(\\w+)', { regex: true, matchCase: true });
    const found = await search(h, owner, q);
    if (!('files' in found)) throw new Error('no result');
    const fileIds = found.files.filter((f) => f.path !== 'c.ts').map((f) => f.fileId);
    const replaced = await settled(h, owner.replaceAll(q, 'new$1', fileIds));
    expect(replaced).toMatchObject({ type: 'search.replaced', files: 2, replacements: 3 });
    h.flush();
    expect(bText.toString()).toBe('use(newName);\n');
    expect(updates).toHaveLength(1);
    const aText = textOf(bob, fileIdOf(bob, 'a.ts'));
    const cText = textOf(bob, fileIdOf(bob, 'c.ts'));
    h.flush();
    expect(aText.toString()).toBe('let newName = 1;\nnewName++;\n');
    expect(cText.toString()).toBe('oldName\n');
  });

  it('[P37] the replace is undone in one step, in every file, keeping what a collaborator typed since', async () => {
    const { h, ws, owner } = setup({ 'a.ts': 'foo\nfoo\n', 'b.ts': 'x foo\n' });
    const bob = h.client(ws.workspaceId, ws.owner.token);
    h.flush();
    const aText = textOf(bob, fileIdOf(bob, 'a.ts'));
    const bText = textOf(bob, fileIdOf(bob, 'b.ts'));
    h.flush();
    const found = await search(h, owner, query('foo'));
    if (!('files' in found)) throw new Error('no result');
    await settled(h, owner.replaceAll(query('foo'), 'bar', found.files.map((f) => f.fileId)));
    h.flush();
    expect([aText.toString(), bText.toString()]).toEqual(['bar\nbar\n', 'x bar\n']);
    bText.insert(0, 'typed ');
    h.flush();
    expect(await settled(h, owner.undoReplace())).toMatchObject({ type: 'search.replaced', files: 2 });
    h.flush();
    expect([aText.toString(), bText.toString()]).toEqual(['foo\nfoo\n', 'typed x foo\n']);
    expect(await settled(h, owner.undoReplace())).toMatchObject({ ok: false, code: 'not_found' });
  });

  it('[P38] a viewer may search but not replace: its replace is answered forbidden, its socket stays open', async () => {
    const { h, ws, viewerToken } = setup({ 'a.ts': 'secret\n' });
    const viewer = h.client(ws.workspaceId, viewerToken);
    h.flush();
    const found = await search(h, viewer, query('secret'));
    if (!('files' in found)) throw new Error('no result');
    expect(found.total).toBe(1);
    const refused = await settled(h, viewer.replaceAll(query('secret'), 'public', [found.files[0]!.fileId]));
    expect(refused).toMatchObject({ ok: false, code: 'forbidden' });
    expect(await settled(h, viewer.undoReplace())).toMatchObject({ ok: false, code: 'forbidden' });
    expect(viewer.status.kind).toBe('open');
    const owner = h.client(ws.workspaceId, ws.owner.token);
    h.flush();
    const text = textOf(owner, fileIdOf(owner, 'a.ts'));
    h.flush();
    expect(text.toString()).toBe('secret\n');
  });

  it('[P36] a newer search ends the one before it, which answers busy', async () => {
    const { h, owner } = setup(Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`f${i}.txt`, `${'ab'.repeat(500)}\n`.repeat(100)])));
    const first = owner.search(query('(a|b)+c', { regex: true }));
    const second = owner.search(query('zzz'));
    const [a, b] = await Promise.all([settled(h, first), settled(h, second)]);
    expect(a).toMatchObject({ ok: false, code: 'busy' });
    expect(b).toMatchObject({ type: 'search.result', total: 0 });
  });
});

describe('search in a folder project', () => {
  const folders: string[] = [];
  const syncs: FolderSync[] = [];
  afterEach(async () => {
    await Promise.all(syncs.splice(0).map((sync) => sync.stop()));
    for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
  });

  it('[P36] finds and replaces in files no one opened (docs loaded from the store, then freed)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'flint-search-'));
    folders.push(root);
    mkdirSync(join(root, 'src/deep'), { recursive: true });
    writeFileSync(join(root, 'src/deep/never.ts'), 'export const needle = 1;\n');
    writeFileSync(join(root, 'other.ts'), 'hay\n');
    execFileSync('git', ['init', '-q'], { cwd: root });
    const h = new Harness();
    const ws = h.gateway.createWorkspace('Folder');
    const held = h.gateway.holdRoom(ws.workspaceId)!;
    const sync = new FolderSync({ workspaceId: ws.workspaceId, room: held.room, disk: await NodeDisk.open(root), bases: { get: (k) => h.store.getMeta(k), set: (k, v) => h.store.setMeta(k, v) }, log: () => {}, writeDelayMs: 20 });
    syncs.push(sync);
    await sync.start();
    const owner = h.client(ws.workspaceId, ws.owner.token);
    h.flush();
    const fileId = held.room.fileIdAt('src/deep/never.ts')!;
    expect(held.room.loaded(fileId)).toBeNull();
    const found = await search(h, owner, query('needle'));
    expect(found).toMatchObject({ total: 1, files: [{ path: 'src/deep/never.ts', fileId, matches: [{ line: 0, start: 13, end: 19 }] }] });
    expect(held.room.loaded(fileId)).toBeNull();
    expect(await settled(h, owner.replaceAll(query('needle'), 'pin', [fileId]))).toMatchObject({ files: 1, replacements: 1 });
    const text = textOf(owner, fileId);
    h.flush();
    expect(text.toString()).toBe('export const pin = 1;\n');
  });
});
