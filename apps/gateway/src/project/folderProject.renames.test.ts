/**
 * Renames on a real disk (issue 32, item 8): `mv`, `git mv` and `git checkout -- f` reach the
 * watcher as a delete and a create. The file keeps its document (its id, history and the tabs
 * open on it); a checkout that changes the text is a line edit of the same document.
 */
import type { IndexEntry } from '@flint/protocol';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fileIdOf, textOf } from '../../test/testHarness';
import type { DiskEvent } from '../core/ports/Disk';
import { git, readText, RealFolders, until } from '../../test/realFolder';

const folders = new RealFolders();
afterEach(() => folders.cleanup());

const entryAt = (ctx: Awaited<ReturnType<RealFolders['open']>>, path: string) => ctx.alice.index.doc.getMap<IndexEntry>('entries').get(path);
const idAt = (ctx: Awaited<ReturnType<RealFolders['open']>>, path: string) => {
  const entry = entryAt(ctx, path);
  return entry?.kind === 'file' ? entry.fileId : null;
};

describe('a file renamed on disk', () => {
  it('git mv while someone types: the document moves with its typing, no copy is left at the old path', async () => {
    const root = folders.folder({ 'src/a.ts': 'one\ntwo\n', 'b.ts': 'b\n' }, { git: true });
    const ctx = await folders.open(root);
    const fileId = fileIdOf(ctx.alice, 'src/a.ts');
    const text = textOf(ctx.alice, fileId);
    ctx.h.flush();
    text.insert(0, 'typed\n'); // reaches the gateway at the next flush, the disk later
    git(root, 'mv', 'src/a.ts', 'src/moved.ts');
    await until(ctx.h, () => idAt(ctx, 'src/moved.ts') === fileId && readText(root, 'src/moved.ts') === 'typed\none\ntwo\n', 'the move, with the typing on disk');
    await ctx.sync.flushed();
    ctx.h.flush();
    expect(idAt(ctx, 'src/a.ts')).toBeNull();
    expect(readText(root, 'src/a.ts')).toBeNull();
    expect(text.toString()).toBe('typed\none\ntwo\n');
    expect(git(root, 'status', '--porcelain')).toBe('RM src/a.ts -> src/moved.ts\n');
    // The tab is still live: what is typed now reaches the new path.
    text.insert(text.length, 'three\n');
    await until(ctx.h, () => readText(root, 'src/moved.ts') === 'typed\none\ntwo\nthree\n', 'later typing at the new path');
  });

  it('mv of a file nobody has open keeps its document too', async () => {
    const root = folders.folder({ 'a.ts': 'a\n' });
    const ctx = await folders.open(root);
    const fileId = fileIdOf(ctx.alice, 'a.ts');
    renameSync(join(root, 'a.ts'), join(root, 'c.ts'));
    await until(ctx.h, () => idAt(ctx, 'c.ts') === fileId && !entryAt(ctx, 'a.ts'), 'the rename in the tree');
  });

  it('mv of a folder (the watcher names only the folder) moves every file in it with its document', async () => {
    const root = folders.folder({ 'd/a.ts': 'a\n', 'd/sub/b.ts': 'b\n', 'd/empty.ts': '', 'other.ts': '' });
    const ctx = await folders.open(root);
    const ids = ['d/a.ts', 'd/sub/b.ts', 'd/empty.ts', 'other.ts'].map((path) => fileIdOf(ctx.alice, path));
    renameSync(join(root, 'd'), join(root, 'e'));
    await until(ctx.h, () => ['e/a.ts', 'e/sub/b.ts', 'e/empty.ts', 'other.ts'].every((path, i) => idAt(ctx, path) === ids[i]), 'the files under their new folder');
    await ctx.sync.flushed();
    ctx.h.flush();
    expect([...ctx.alice.index.doc.getMap<IndexEntry>('entries').keys()].sort()).toEqual(['e/a.ts', 'e/empty.ts', 'e/sub/b.ts', 'other.ts']);
  });

  it('a moved folder of many files keeps every document even when taking them in outlasts the window', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 200; i++) files[`d/f${i}.ts`] = `export const v${i} = ${i};\n`;
    const root = folders.folder(files);
    // A window far shorter than the time to take 200 files in: deletes expire mid-batch.
    const ctx = await folders.open(root, { renameWindowMs: 1 });
    const ids = Object.keys(files).map((path) => fileIdOf(ctx.alice, path));
    renameSync(join(root, 'd'), join(root, 'e'));
    await until(ctx.h, () => Object.keys(files).every((path, i) => idAt(ctx, `e/${path.slice(2)}`) === ids[i]), 'every file under e/ with its document');
    await ctx.sync.flushed();
    ctx.h.flush();
    expect(ctx.alice.index.doc.getMap<IndexEntry>('entries').size).toBe(200);
  });

  it('a file saved by renaming over it, then moved, in one watcher batch (no delete reported) keeps its document', async () => {
    const root = folders.folder({ 'a.ts': 'one\ntwo\nthree\n', 'b.ts': 'b\n' });
    const ctx = await folders.open(root);
    const fileId = fileIdOf(ctx.alice, 'a.ts');
    const text = textOf(ctx.alice, fileId);
    ctx.h.flush();
    writeFileSync(join(root, 'a.ts.tmp'), 'one\ntwo\nthree\nfour\n'); // an editor's save
    renameSync(join(root, 'a.ts.tmp'), join(root, 'a.ts'));
    renameSync(join(root, 'a.ts'), join(root, 'c.ts')); // and at once a move: moved and changed
    await until(ctx.h, () => idAt(ctx, 'c.ts') === fileId && !entryAt(ctx, 'a.ts') && text.toString() === 'one\ntwo\nthree\nfour\n', 'the moved, changed file in its tab');
  });

  it('git checkout -- f is a line edit of the same document, and typing elsewhere in it stays', async () => {
    const root = folders.folder({ 'f.ts': 'one\ntwo\nthree\nfour\nfive\n' }, { git: true });
    const ctx = await folders.open(root);
    const fileId = fileIdOf(ctx.alice, 'f.ts');
    const text = textOf(ctx.alice, fileId);
    ctx.h.flush();
    writeFileSync(join(root, 'f.ts'), 'one\ntwo\nthree\nfour\nFIVE\n'); // an edit made outside
    await until(ctx.h, () => text.toString().endsWith('FIVE\n'), 'the outside edit in the tab');
    text.insert(0, '// typed\n');
    ctx.h.flush();
    git(root, 'checkout', '--', 'f.ts');
    await until(ctx.h, () => text.toString() === '// typed\none\ntwo\nthree\nfour\nfive\n' && readText(root, 'f.ts') === text.toString(), 'the checkout merged with the typing');
    expect(idAt(ctx, 'f.ts')).toBe(fileId);
  });

  it('git stash while someone types: the stash takes the saved change away as a line edit, the typing stays', async () => {
    const root = folders.folder({ 'f.ts': 'one\ntwo\nthree\nfour\nfive\n' }, { git: true });
    const ctx = await folders.open(root);
    const fileId = fileIdOf(ctx.alice, 'f.ts');
    const text = textOf(ctx.alice, fileId);
    ctx.h.flush();
    text.insert(text.length - 'five\n'.length, 'saved\n');
    await until(ctx.h, () => readText(root, 'f.ts') === 'one\ntwo\nthree\nfour\nsaved\nfive\n', 'the saved line on disk');
    text.insert(0, '// typed\n');
    ctx.h.flush(); // the gateway has it; its write is queued
    git(root, 'stash', '-q');
    await until(ctx.h, () => text.toString() === '// typed\none\ntwo\nthree\nfour\nfive\n' && readText(root, 'f.ts') === text.toString(), 'the stash merged with the typing');
    expect(idAt(ctx, 'f.ts')).toBe(fileId);
  });

  it('a delete and its create in separate watcher batches are one change of the same document', async () => {
    // git checkout unlinks a file, then writes it; a slow disk or a busy gateway may see the two
    // in separate batches. The window is long here so that a loaded machine cannot outrun it.
    const root = folders.folder({ 'f.ts': 'one\ntwo\n' });
    const batches: DiskEvent[][] = [];
    const ctx = await folders.open(root, { renameWindowMs: 5_000, batches });
    const fileId = fileIdOf(ctx.alice, 'f.ts');
    const text = textOf(ctx.alice, fileId);
    ctx.h.flush();
    rmSync(join(root, 'f.ts'));
    await until(ctx.h, () => batches.some((batch) => batch.some((event) => event.type === 'delete' && event.path === 'f.ts')), 'the delete delivered');
    writeFileSync(join(root, 'f.ts'), 'one\nTWO\n');
    await until(ctx.h, () => text.toString() === 'one\nTWO\n', 'the new text in the open tab');
    expect(idAt(ctx, 'f.ts')).toBe(fileId);
  });
});
