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

/** A new FolderSync on the same disk and workspace (a restart of the sync alone). */
async function reopen(ctx: Awaited<ReturnType<typeof open>>) {
  const held = ctx.h.gateway.holdRoom(ctx.workspaceId)!;
  const sync = new FolderSync({ workspaceId: ctx.workspaceId, room: held.room, disk: ctx.disk, bases: { get: (k) => ctx.h.store.getMeta(k), set: (k, v) => ctx.h.store.setMeta(k, v) }, log: () => {}, writeDelayMs: 0, renameWindowMs: 0 });
  await sync.start();
  const alice = ctx.h.client(ctx.workspaceId, ctx.token);
  ctx.h.flush();
  return { ...ctx, sync, alice, held };
}

