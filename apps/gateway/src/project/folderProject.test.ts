/**
 * A folder project on a real disk: NodeDisk (node:fs, @parcel/watcher, .gitignore) under a
 * temporary folder holding a real git repository, the real gateway on the in-memory harness.
 */
import type { IndexEntry } from '@flint/protocol';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, mkdirSync, statSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fileIdOf, Harness, textOf, untilFlushed as until } from '../../test/testHarness';
import { NodeDisk } from './NodeDisk';
import { FolderSync } from './FolderSync';

const folders: string[] = [];
const syncs: FolderSync[] = [];
afterEach(async () => {
  await Promise.all(syncs.splice(0).map((sync) => sync.stop()));
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.email=test@flint.dev', '-c', 'user.name=Flint Test', ...args], { cwd, encoding: 'utf8' });
}

function repo(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'flint-folder-'));
  folders.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  git(root, 'init', '-q', '-b', 'main');
  git(root, 'add', '-A');
  git(root, 'commit', '-qm', 'init');
  return root;
}

async function open(root: string) {
  const h = new Harness();
  const ws = h.gateway.createWorkspace('Folder');
  const held = h.gateway.holdRoom(ws.workspaceId)!;
  const disk = await NodeDisk.open(root);
  const sync = new FolderSync({ workspaceId: ws.workspaceId, room: held.room, disk, bases: { get: (k) => h.store.getMeta(k), set: (k, v) => h.store.setMeta(k, v) }, log: () => {}, writeDelayMs: 20 });
  syncs.push(sync);
  await sync.start();
  // The listed files are read after the start (text or binary, a digest to pair a move by).
  await sync.flushed();
  const alice = h.client(ws.workspaceId, ws.owner.token);
  h.flush();
  return { h, sync, alice, root };
}

const read = (root: string, path: string) => {
  try {
    return readFileSync(join(root, path), 'utf8');
  } catch {
    return null;
  }
};

describe('a folder project on disk, in a git repository', () => {
  it('follows edits both ways, and a branch checkout while someone types', async () => {
    const root = repo({ 'src/a.ts': 'export const a = 1;\n', 'src/b.ts': 'export const b = 1;\n', '.gitignore': 'dist/\n' });
    mkdirSync(join(root, 'dist'));
    writeFileSync(join(root, 'dist/out.js'), 'built');
    const ctx = await open(root);
    const paths = () => [...ctx.alice.index.doc.getMap<IndexEntry>('entries').keys()].sort();
    expect(paths()).toEqual(['.gitignore', 'src/a.ts', 'src/b.ts']);

    // Typing in the browser reaches the file.
    const a = textOf(ctx.alice, fileIdOf(ctx.alice, 'src/a.ts'));
    const b = textOf(ctx.alice, fileIdOf(ctx.alice, 'src/b.ts'));
    ctx.h.flush();
    a.insert(0, '// hello\n');
    await until(ctx.h, () => read(root, 'src/a.ts') === '// hello\nexport const a = 1;\n', 'the edit on disk');

    // Writing the file from outside reaches the browser.
    writeFileSync(join(root, 'src/b.ts'), 'export const b = 2;\n');
    await until(ctx.h, () => b.toString() === 'export const b = 2;\n', 'the disk change in the browser');

    // A branch that changes b.ts; checking main out again while a.ts is being typed in.
    git(root, 'checkout', '-qb', 'feature');
    writeFileSync(join(root, 'src/b.ts'), 'export const b = 3;\n');
    git(root, 'commit', '-qam', 'b3');
    await until(ctx.h, () => b.toString() === 'export const b = 3;\n', 'the branch in the browser');
    a.insert(a.length, '// typed during checkout\n');
    git(root, 'checkout', '-q', 'main');
    await until(ctx.h, () => b.toString() === 'export const b = 1;\n' && read(root, 'src/a.ts')?.includes('// typed during checkout') === true, 'main again, the typing kept');
    // `commit -a` took "// hello" into feature; main has no such line, so the checkout removes it
    // (a line edit like any other) and the line typed meanwhile stays.
    expect(a.toString()).toBe('export const a = 1;\n// typed during checkout\n');
    expect(git(root, 'status', '--porcelain')).toContain(' M src/a.ts');

    // Files created and deleted on disk come and go in the tree.
    writeFileSync(join(root, 'src/c.ts'), 'new\n');
    rmSync(join(root, 'src/b.ts'));
    await until(ctx.h, () => paths().join() === '.gitignore,src/a.ts,src/c.ts', 'create and delete in the tree');
  });

  it('keeps binary files out of the editor, follows no link out of the folder, keeps a file’s mode', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'flint-outside-'));
    folders.push(outside);
    writeFileSync(join(outside, 'secret.txt'), 'secret');
    const root = repo({ 'run.sh': '#!/bin/sh\necho hi\n' });
    chmodSync(join(root, 'run.sh'), 0o755);
    writeFileSync(join(root, 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 13]));
    symlinkSync(join(outside, 'secret.txt'), join(root, 'leak.txt'));
    symlinkSync(outside, join(root, 'outside'));
    const ctx = await open(root);
    const entries = ctx.alice.index.doc.getMap<IndexEntry>('entries');
    expect([...entries.keys()].sort()).toEqual(['logo.png', 'run.sh']);
    expect(entries.get('logo.png')).toMatchObject({ binary: true, bytes: 8 });
    expect(await ctx.sync.readBinary('leak.txt')).toBeNull();
    expect(await ctx.sync.readBinary('../secret.txt')).toBeNull();

    const run = textOf(ctx.alice, fileIdOf(ctx.alice, 'run.sh'));
    ctx.h.flush();
    run.insert(run.length, 'echo bye\n');
    await until(ctx.h, () => read(root, 'run.sh')?.endsWith('echo bye\n') === true, 'the edit on disk');
    expect(statSync(join(root, 'run.sh')).mode & 0o777).toBe(0o755);
  });

  it('never writes into .git, whatever a collaborator puts in the tree (a hook would run on this machine)', async () => {
    const root = repo({ 'a.ts': 'a\n' });
    const config = read(root, '.git/config');
    const ctx = await open(root);
    const made = await ctx.h.answered(ctx.alice.request({ type: 'file.create', path: '.git/hooks/pre-commit', kind: 'file' }));
    expect(made).toMatchObject({ ok: false, code: 'forbidden', message: expect.stringContaining('.git') });
    const moved = await ctx.h.answered(ctx.alice.request({ type: 'file.rename', from: 'a.ts', to: '.git/config' }));
    expect(moved).toMatchObject({ ok: false, code: 'forbidden' });
    // A later edit to a normal file still reaches the disk: the sync did not stop.
    await ctx.h.answered(ctx.alice.request({ type: 'file.create', path: 'b.ts', kind: 'file' }));
    await until(ctx.h, () => read(root, 'b.ts') === '', 'the next file on disk');
    await ctx.sync.flushed();
    expect(read(root, '.git/hooks/pre-commit')).toBeNull();
    expect(read(root, '.git/config')).toBe(config);
    expect(read(root, 'a.ts')).toBe('a\n');
    await expect((await NodeDisk.open(root)).write('.git/config', new TextEncoder().encode('[core]\n'))).rejects.toThrow(/outside the folder/);
  });
});

