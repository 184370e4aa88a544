import type { IndexEntry } from '@flint/protocol';
import { describe, expect, it, vi } from 'vitest';
import { SqliteStore } from '../storage/SqliteStore';
import { fileIdOf, Harness, textOf } from '../../test/testHarness';
import { FolderSync } from './FolderSync';
import { MemoryDisk } from '../../test/MemoryDisk';

const bytes = (text: string) => new TextEncoder().encode(text);

async function open(files: Record<string, string | Uint8Array>, store = new SqliteStore(':memory:'), existing?: { h: Harness; workspaceId: string; token: string }, mode = 0o644) {
  const disk = new MemoryDisk();
  for (const [path, content] of Object.entries(files)) disk.files.set(path, { bytes: typeof content === 'string' ? bytes(content) : content, mode });
  const h = existing?.h ?? new Harness(store);
  const created = existing ?? (() => {
    const ws = h.gateway.createWorkspace('Folder');
    return { workspaceId: ws.workspaceId, token: ws.owner.token };
  })();
  const held = h.gateway.holdRoom(created.workspaceId)!;
  const sync = new FolderSync({ workspaceId: created.workspaceId, room: held.room, disk, bases: { get: (k) => h.store.getMeta(k), set: (k, v) => h.store.setMeta(k, v) }, log: () => {}, writeDelayMs: 0, renameWindowMs: 0 });
  await sync.start();
  // The listed files are read after the start (text or binary, a digest to pair a move by).
  await sync.flushed();
  const alice = h.client(created.workspaceId, created.token);
  h.flush();
  return { h, disk, sync, alice, held, ...created };
}

/** Disk events in, documents out, writes done, sockets flushed. */
async function settle(ctx: Awaited<ReturnType<typeof open>>) {
  for (let i = 0; i < 3; i++) {
    ctx.h.flush();
    ctx.disk.deliver();
    await ctx.sync.flushed();
  }
  ctx.h.flush();
}

describe('a folder project', () => {
  it('opens a folder: text files become documents, binary ones entries without one; ignored ones stay out', async () => {
    const ctx = await open({ 'src/a.ts': 'const a = 1;\n', 'logo.png': new Uint8Array([0x89, 0x50, 0, 0, 1]), 'node_modules/x/index.js': 'x' });
    const entries = ctx.alice.index.doc.getMap<IndexEntry>('entries');
    expect([...entries.keys()].sort()).toEqual(['logo.png', 'src/a.ts']);
    expect(entries.get('logo.png')).toMatchObject({ kind: 'file', binary: true, bytes: 5 });
    const text = textOf(ctx.alice, fileIdOf(ctx.alice, 'src/a.ts'));
    ctx.h.flush();
    expect(text.toString()).toBe('const a = 1;\n');
    expect(ctx.disk.writes).toBe(0);
  });

  it('writes what people type to the disk, keeping CRLF, BOM and mode', async () => {
    const ctx = await open({ 'a.ts': '\ufeffone\r\ntwo\r\n' }, undefined, undefined, 0o755);
    const text = textOf(ctx.alice, fileIdOf(ctx.alice, 'a.ts'));
    ctx.h.flush();
    expect(text.toString()).toBe('one\ntwo\n');
    text.insert(4, 'TWO ');
    await settle(ctx);
    expect(ctx.disk.text('a.ts')).toBe('\ufeffone\r\nTWO two\r\n');
    expect(ctx.disk.files.get('a.ts')!.mode).toBe(0o755);
  });

  it('brings a change made on disk to every browser as a merge with what people typed meanwhile', async () => {
    const ctx = await open({ 'a.ts': 'one\ntwo\nthree\n' });
    const bob = ctx.h.client(ctx.workspaceId, ctx.token);
    ctx.h.flush();
    const aliceText = textOf(ctx.alice, fileIdOf(ctx.alice, 'a.ts'));
    const bobText = textOf(bob, fileIdOf(bob, 'a.ts'));
    ctx.h.flush();
    aliceText.insert(0, '// typed\n'); // not on disk yet
    ctx.disk.external('a.ts', 'one\ntwo\nTHREE\n'); // a formatter, git, another editor
    ctx.h.flush();
    ctx.disk.deliver();
    await ctx.sync.flushed();
    await settle(ctx);
    expect(bobText.toString()).toBe('// typed\none\ntwo\nTHREE\n');
    expect(aliceText.toString()).toBe('// typed\none\ntwo\nTHREE\n');
    expect(ctx.disk.text('a.ts')).toBe('// typed\none\ntwo\nTHREE\n');
  });

  it('follows files created, renamed and deleted on either side', async () => {
    const ctx = await open({ 'a.ts': 'a\n', 'b.ts': 'b\n' });
    ctx.disk.external('new.ts', 'fresh\n');
    ctx.disk.external('b.ts', null);
    ctx.disk.externalRename('a.ts', 'moved/a.ts');
    await settle(ctx);
    expect([...ctx.alice.index.doc.getMap('entries').keys()].sort()).toEqual(['moved/a.ts', 'new.ts']);

    // And from the IDE: create, rename, delete.
    expect((await ctx.h.answered(ctx.alice.request({ type: 'file.create', path: 'src/made.ts', kind: 'file' }))).ok).toBe(true);
    await settle(ctx);
    expect(ctx.disk.text('src/made.ts')).toBe('');
    await ctx.h.answered(ctx.alice.request({ type: 'file.rename', from: 'new.ts', to: 'renamed.ts' }));
    await ctx.h.answered(ctx.alice.request({ type: 'file.delete', path: 'moved/a.ts' }));
    await settle(ctx);
    expect([...ctx.disk.files.keys()].sort()).toEqual(['renamed.ts', 'src/made.ts']);
    expect(ctx.disk.text('renamed.ts')).toBe('fresh\n');
  });

  it('does not throw away typing the disk never saw when the file is deleted on disk', async () => {
    const ctx = await open({ 'a.ts': 'a\n' });
    const text = textOf(ctx.alice, fileIdOf(ctx.alice, 'a.ts'));
    ctx.h.flush();
    text.insert(0, 'typed ');
    ctx.h.flush();
    ctx.disk.external('a.ts', null);
    ctx.disk.deliver(); // the delete is seen before the typing is written
    await settle(ctx);
    expect(ctx.disk.text('a.ts')).toBe('typed a\n');
    expect(text.toString()).toBe('typed a\n');
  });

  it('after a kill between a document update and its disk write, a restart writes the document; a disk edit made while down comes in', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] }); // the first sync's write never runs: it is killed
    try {
      const ctx = await open({ 'a.ts': 'one\n', 'b.ts': 'bee\n' });
      const text = textOf(ctx.alice, fileIdOf(ctx.alice, 'a.ts'));
      ctx.h.flush();
      text.insert(0, 'typed ');
      ctx.h.flush(); // the gateway persisted it; the disk never got it
      expect(ctx.disk.text('a.ts')).toBe('one\n');
      ctx.disk.files.set('b.ts', { bytes: bytes('BEE\n'), mode: 0o644 }); // edited while Flint was down
      ctx.h.restart();
      const again = await reopen(ctx);
      await settle(again);
      expect(again.disk.text('a.ts')).toBe('typed one\n');
      const b = textOf(again.alice, fileIdOf(again.alice, 'b.ts'));
      again.h.flush();
      expect(b.toString()).toBe('BEE\n');
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('a folder project\'s files without documents (issue 36)', () => {
  const storedUpdates = (ctx: Awaited<ReturnType<typeof open>>, fileId: string) => ctx.h.store.loadDoc(`${ctx.workspaceId}/${fileId}`).updates.length;
  const entryOf = (ctx: Awaited<ReturnType<typeof open>>, path: string) => ctx.held.room.entries.get(path) as IndexEntry | undefined;

  it('lists a folder without making a document; the first open makes it from the disk, and it syncs from then on', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 50; i++) files[`src/f${i}.ts`] = `export const v${i} = ${i};\n`;
    const ctx = await open(files);
    const ids = Object.keys(files).map((path) => fileIdOf(ctx.alice, path));
    for (const [i, path] of Object.keys(files).entries()) {
      expect(entryOf(ctx, path)).toEqual({ kind: 'file', fileId: ids[i], listed: true });
      expect(storedUpdates(ctx, ids[i]!)).toBe(0);
    }
    expect(ctx.held.room.loadedFiles().size).toBe(0);
    // A change on disk to a file no one opened: the listing is all there is to update.
    ctx.disk.external('src/f1.ts', 'export const v1 = 100;\n');
    await settle(ctx);
    expect(storedUpdates(ctx, ids[1]!)).toBe(0);
    // A read (search, the agent's search, a zip) reads the disk and makes nothing.
    expect(ctx.held.room.textOf(ids[1]!)).toBe('export const v1 = 100;\n');
    expect(ctx.held.room.loadedFiles().has(ids[1]!)).toBe(false);
    // Opened: a document with the disk's text; typing in it reaches the disk.
    const text = textOf(ctx.alice, ids[1]!);
    ctx.h.flush();
    expect(text.toString()).toBe('export const v1 = 100;\n');
    expect(entryOf(ctx, 'src/f1.ts')).toEqual({ kind: 'file', fileId: ids[1] });
    expect(storedUpdates(ctx, ids[1]!)).toBeGreaterThan(0);
    text.insert(0, '// typed\n');
    await settle(ctx);
    expect(ctx.disk.text('src/f1.ts')).toBe('// typed\nexport const v1 = 100;\n');
    // And a disk change to it now merges with the typing, as for any document.
    ctx.disk.external('src/f1.ts', '// typed\nexport const v1 = 100;\nexport const w = 1;\n');
    text.insert(0, '// more\n');
    await settle(ctx);
    expect(text.toString()).toBe('// more\n// typed\nexport const v1 = 100;\nexport const w = 1;\n');
    expect(ctx.disk.text('src/f1.ts')).toBe(text.toString());
    // The others still have none.
    expect(ids.filter((id) => storedUpdates(ctx, id) > 0)).toEqual([ids[1]]);
  });

  it('a file that stopped being text before its first open becomes a binary entry, its bytes left alone', async () => {
    const ctx = await open({ 'a.txt': 'text\n' });
    const fileId = fileIdOf(ctx.alice, 'a.txt');
    ctx.disk.files.set('a.txt', { bytes: new Uint8Array([0x89, 0x50, 0, 0, 7]), mode: 0o644 }); // its event not taken in yet
    expect(ctx.held.room.doc(fileId)).toBeNull();
    expect(entryOf(ctx, 'a.txt')).toEqual({ kind: 'file', fileId, binary: true, bytes: 5 });
    await settle(ctx);
    expect([...ctx.disk.files.get('a.txt')!.bytes]).toEqual([0x89, 0x50, 0, 0, 7]);
  });

  it('a warm start reads nothing it listed before; a file deleted or added while down follows the disk', async () => {
    const store = new SqliteStore(':memory:');
    const ctx = await open({ 'a.ts': 'a\n', 'b.ts': 'b\n', 'c.ts': 'c\n' }, store);
    const b = textOf(ctx.alice, fileIdOf(ctx.alice, 'b.ts'));
    ctx.h.flush();
    b.insert(0, 'typed ');
    await settle(ctx);
    await ctx.sync.stop();
    ctx.held.release();
    ctx.h.restart();
    ctx.disk.files.delete('c.ts');
    ctx.disk.files.set('d.ts', { bytes: bytes('d\n'), mode: 0o644 });
    ctx.disk.files.set('a.ts', { bytes: bytes('A\n'), mode: 0o644 });
    const again = await reopen(ctx);
    await settle(again);
    const entries = again.alice.index.doc.getMap<IndexEntry>('entries');
    expect([...entries.keys()].sort()).toEqual(['a.ts', 'b.ts', 'd.ts']);
    expect(entries.get('a.ts')).toMatchObject({ listed: true });
    expect(entries.get('b.ts')).not.toHaveProperty('listed');
    expect(again.held.room.loadedFiles().size).toBe(0);
    const a = textOf(again.alice, fileIdOf(again.alice, 'a.ts'));
    const b2 = textOf(again.alice, fileIdOf(again.alice, 'b.ts'));
    again.h.flush();
    expect(a.toString()).toBe('A\n');
    expect(b2.toString()).toBe('typed b\n');
  });

  it('what changes on disk between the start\'s listing and the watcher\'s start is taken in (they run together)', async () => {
    const store = new SqliteStore(':memory:');
    const ctx = await open({ 'a.ts': 'a\n', 'b.ts': 'one\ntwo\n', 'c.ts': 'c\n' }, store);
    const b = textOf(ctx.alice, fileIdOf(ctx.alice, 'b.ts'));
    ctx.h.flush();
    b.insert(0, 'typed\n');
    await settle(ctx);
    await ctx.sync.stop();
    ctx.held.release();
    ctx.h.restart();
    // Changed right after the listing, with no event: the watcher is not up yet.
    const list = ctx.disk.list.bind(ctx.disk);
    let listings = 0;
    ctx.disk.list = async (under) => {
      const files = await list(under);
      if (under === undefined && listings++ === 0) {
        ctx.disk.files.set('late.ts', { bytes: bytes('late\n'), mode: 0o644 });
        ctx.disk.files.delete('c.ts');
        ctx.disk.files.set('b.ts', { bytes: bytes('typed\none\ntwo\nthree\n'), mode: 0o644 });
      }
      return files;
    };
    const again = await reopen(ctx);
    await settle(again);
    const entries = again.alice.index.doc.getMap<IndexEntry>('entries');
    expect([...entries.keys()].sort()).toEqual(['a.ts', 'b.ts', 'late.ts']);
    expect(entries.get('late.ts')).toMatchObject({ listed: true });
    const b2 = textOf(again.alice, fileIdOf(again.alice, 'b.ts'));
    again.h.flush();
    expect(b2.toString()).toBe('typed\none\ntwo\nthree\n');
    expect(listings).toBe(2);
  });

  it('the agent\'s delete of a file no one opened keeps its text for a Reject: the document is made first', async () => {
    const ctx = await open({ 'keep.ts': 'precious\n', 'other.ts': 'x\n' });
    const room = ctx.held.room;
    const removed = room.removeKeepingDocs('keep.ts');
    if (!removed.ok) throw new Error(removed.message);
    await settle(ctx);
    expect(ctx.disk.text('keep.ts')).toBeNull();
    expect(room.restoreEntries(removed.entries).ok).toBe(true);
    await settle(ctx);
    expect(ctx.disk.text('keep.ts')).toBe('precious\n');
  });
});

/** A new FolderSync on the same disk and workspace (a restart of the sync alone). */
async function reopen(ctx: Awaited<ReturnType<typeof open>>) {
  const held = ctx.h.gateway.holdRoom(ctx.workspaceId)!;
  const sync = new FolderSync({ workspaceId: ctx.workspaceId, room: held.room, disk: ctx.disk, bases: { get: (k) => ctx.h.store.getMeta(k), set: (k, v) => ctx.h.store.setMeta(k, v) }, log: () => {}, writeDelayMs: 0, renameWindowMs: 0 });
  await sync.start();
  const alice = ctx.h.client(ctx.workspaceId, ctx.token);
  ctx.h.flush();
  return { ...ctx, sync, alice, held };
}

