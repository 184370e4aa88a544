/**
 * The folder's edge under attack (DESIGN §11.3, issue 32, decision 0025): real temporary
 * folders, real links, the real gateway on the in-memory harness (and on a real socket for the
 * zip upload). Whatever a collaborator, the agent or a zip asks for, and however the disk is
 * swapped under a write, nothing outside the folder, inside `.git`, ignored, or the gateway's
 * own data changes.
 */
import type { IndexEntry } from '@flint/protocol';
import { strToU8, zipSync } from 'fflate';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { Gateway } from '../core/Gateway';
import { fileIdOf, Harness, textOf, untilFlushed as until } from '../../test/testHarness';
import { SqliteStore } from '../storage/SqliteStore';
import { startServer, type RunningServer } from '../transport/httpServer';
import { systemClock } from '../transport/systemClock';
import { systemRandom } from '../transport/systemRandom';
import { NodeDisk, type NodeDiskOptions } from './NodeDisk';
import type { FolderProject } from './FolderProject';
import { FolderSync } from './FolderSync';

const folders: string[] = [];
const syncs: FolderSync[] = [];
const servers: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(syncs.splice(0).map((sync) => sync.stop()));
  await Promise.all(servers.splice(0).map((server) => server.close()));
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function folder(files: Record<string, string> = {}, prefix = 'flint-hostile-'): string {
  const root = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  folders.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

/** Everything under `root` with its text (links as `-> target`): what must not change. */
function snapshot(root: string): Record<string, string> {
  const seen: Record<string, string> = {};
  const walk = (dir: string, prefix: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = prefix + entry.name;
      if (entry.isSymbolicLink()) seen[path] = 'link';
      else if (entry.isDirectory()) walk(join(dir, entry.name), `${path}/`);
      else seen[path] = readFileSync(join(dir, entry.name), 'utf8');
    }
  };
  walk(root, '');
  return seen;
}

const read = (root: string, path: string) => {
  try {
    return readFileSync(join(root, path), 'utf8');
  } catch {
    return null;
  }
};

async function open(root: string, options: NodeDiskOptions = {}) {
  const h = new Harness();
  const ws = h.gateway.createWorkspace('Hostile');
  const held = h.gateway.holdRoom(ws.workspaceId)!;
  const disk = await NodeDisk.open(root, options);
  const logged: string[] = [];
  const sync = new FolderSync({
    workspaceId: ws.workspaceId,
    room: held.room,
    disk,
    bases: { get: (k) => h.store.getMeta(k), set: (k, v) => h.store.setMeta(k, v) },
    log: (_level, message, fields) => logged.push(`${message} ${JSON.stringify(fields)}`),
    writeDelayMs: 5,
  });
  syncs.push(sync);
  await sync.start();
  const alice = h.client(ws.workspaceId, ws.owner.token);
  h.flush();
  const paths = () => [...alice.index.doc.getMap<IndexEntry>('entries').keys()].sort();
  const request = (message: Parameters<typeof alice.request>[0]) => h.answered(alice.request(message));
  return { h, sync, disk, room: held.room, alice, paths, request, logged };
}

const bytes = (text: string) => new TextEncoder().encode(text);

describe('links on disk: nothing outside the folder changes', () => {
  const kinds: Array<[string, (outside: string, root: string) => void]> = [
    ['an absolute link', (outside, root) => symlinkSync(outside, join(root, 'linkdir'))],
    ['a relative link', (outside, root) => symlinkSync(join('..', outside.slice(outside.lastIndexOf('/') + 1)), join(root, 'linkdir'))],
    [
      'a chain of links, the first pointing inside',
      (outside, root) => {
        symlinkSync(outside, join(root, 'hop'));
        symlinkSync('hop', join(root, 'linkdir'));
      },
    ],
  ];
  for (const [kind, link] of kinds) {
    it(`${kind} to a folder outside: create, type, delete and rename through it are refused, the outside untouched`, async () => {
      const outside = folder({ 'existing.txt': 'precious\n' }, 'flint-outside-');
      const root = folder({ 'a.txt': 'a\n' });
      link(outside, root);
      const before = snapshot(outside);
      const ctx = await open(root);

      // The wire (and the agent's `*** Add File:` and rename_file, which call the same room).
      for (const path of ['linkdir/pwned.txt', 'linkdir/existing.txt']) {
        expect(await ctx.request({ type: 'file.create', path, kind: 'file' })).toMatchObject({ ok: false, code: 'forbidden', message: expect.stringMatching(/link/) });
      }
      expect(await ctx.request({ type: 'file.rename', from: 'a.txt', to: 'linkdir/a.txt' })).toMatchObject({ ok: false, code: 'forbidden' });
      expect(ctx.room.createFile('linkdir/agent.txt', 'from the agent')).toMatchObject({ ok: false, code: 'forbidden' });

      // The disk port itself, as a write of an existing document would reach it.
      await expect(ctx.disk.write('linkdir/existing.txt', bytes('truncated'))).rejects.toThrow(/link/);
      await expect(ctx.disk.write('linkdir/new/deeper.txt', bytes('x'))).rejects.toThrow(/link/);
      await expect(ctx.disk.remove('linkdir/existing.txt')).rejects.toThrow(/link/);
      await expect(ctx.disk.rename('a.txt', 'linkdir/a.txt')).rejects.toThrow(/link/);
      await expect(ctx.disk.rename('linkdir/existing.txt', 'stolen.txt')).rejects.toThrow(/link/);

      await ctx.sync.flushed();
      expect(snapshot(outside)).toEqual(before);
      expect(read(root, 'a.txt')).toBe('a\n');
      expect(read(root, 'stolen.txt')).toBeNull();
    });
  }

  it('a link to a file is never written through nor replaced by a regular file: the write is refused and logged', async () => {
    const outside = folder({ 'secret.txt': 'secret\n' }, 'flint-outside-');
    const root = folder({ 'real.txt': 'real\n' });
    symlinkSync('real.txt', join(root, 'alias.txt'));
    symlinkSync(join(outside, 'secret.txt'), join(root, 'leak.txt'));
    const ctx = await open(root);
    expect(ctx.paths()).toEqual(['alias.txt', 'real.txt']); // a link inside is shown (read through)

    expect(await ctx.request({ type: 'file.create', path: 'leak.txt', kind: 'file' })).toMatchObject({ ok: false, code: 'forbidden', message: expect.stringMatching(/link/) });
    const alias = textOf(ctx.alice, fileIdOf(ctx.alice, 'alias.txt'));
    ctx.h.flush();
    alias.insert(0, 'typed\n');
    await until(ctx.h, () => ctx.logged.some((line) => line.includes('alias.txt') && line.includes('is a link on disk')), 'the refused write in the log');
    expect(lstatSync(join(root, 'alias.txt')).isSymbolicLink()).toBe(true);
    expect(lstatSync(join(root, 'leak.txt')).isSymbolicLink()).toBe(true);
    expect(read(root, 'real.txt')).toBe('real\n');
    expect(read(outside, 'secret.txt')).toBe('secret\n');
  });

  it('at start, a document whose folder became a link is not written, and the others still are', async () => {
    const outside = folder({}, 'flint-outside-');
    const root = folder({ 'asub/a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' });
    const ctx = await open(root);
    const typed = ['asub/a.txt', 'b.txt', 'c.txt'].map((path) => textOf(ctx.alice, fileIdOf(ctx.alice, path)));
    ctx.h.flush();
    await ctx.sync.stop();
    // While the sync is away: typing in every file, and on disk the files gone and `asub` a link out.
    for (const text of typed) text.insert(0, 'typed\n');
    ctx.h.flush();
    rmSync(join(root, 'asub'), { recursive: true });
    rmSync(join(root, 'b.txt'));
    rmSync(join(root, 'c.txt'));
    symlinkSync(outside, join(root, 'asub'));
    const again = new FolderSync({ workspaceId: ctx.sync.workspaceId, room: ctx.room, disk: await NodeDisk.open(root), bases: { get: (k) => ctx.h.store.getMeta(k), set: (k, v) => ctx.h.store.setMeta(k, v) }, log: () => {}, writeDelayMs: 5 });
    syncs.push(again);
    await again.start();
    expect(read(root, 'b.txt')).toBe('typed\nb\n');
    expect(read(root, 'c.txt')).toBe('typed\nc\n');
    expect(readdirSync(outside)).toEqual([]);
  });

  it('gitlink -> .git: a hook written through it never lands in .git', async () => {
    const root = folder({ 'a.txt': 'a\n', '.git/HEAD': 'ref: refs/heads/main\n' });
    mkdirSync(join(root, '.git/hooks'));
    symlinkSync('.git', join(root, 'gitlink'));
    const ctx = await open(root);
    expect(await ctx.request({ type: 'file.create', path: 'gitlink/hooks/pre-commit', kind: 'file' })).toMatchObject({ ok: false, code: 'forbidden' });
    expect(await ctx.request({ type: 'file.rename', from: 'a.txt', to: 'gitlink/hooks/post-checkout' })).toMatchObject({ ok: false, code: 'forbidden' });
    await expect(ctx.disk.write('gitlink/hooks/pre-commit', bytes('#!/bin/sh\ntouch /tmp/pwned\n'))).rejects.toThrow(/link/);
    await ctx.sync.flushed();
    expect(readdirSync(join(root, '.git/hooks'))).toEqual([]);
  });

  it('a folder swapped for a link after it was checked: the write lands in the folder that was checked', async () => {
    const outside = folder({ 'a.ts': 'outside\n' }, 'flint-outside-');
    const root = folder({ 'sub/a.ts': 'inside\n' });
    let swapped = false;
    const ctx = await open(root, {
      // Between the walk and the rename over the file: the moment a check-then-use write is fooled.
      beforeChange: (path) => {
        if (path !== 'sub/a.ts' || swapped) return;
        renameSync(join(root, 'sub'), join(root, 'moved'));
        symlinkSync(outside, join(root, 'sub'));
        swapped = true;
      },
    });
    const a = textOf(ctx.alice, fileIdOf(ctx.alice, 'sub/a.ts'));
    ctx.h.flush();
    a.insert(0, 'typed\n');
    await until(ctx.h, () => read(root, 'moved/a.ts') === 'typed\ninside\n', 'the write in the folder that was held');
    expect(swapped).toBe(true);
    expect(read(outside, 'a.ts')).toBe('outside\n');
    expect(readdirSync(outside)).toEqual(['a.ts']);
  });

  it('a folder racing between a real folder and a link to outside, on another thread: no write ever lands outside', async () => {
    const outside = folder({ 'f0.txt': 'precious\n' }, 'flint-outside-');
    const root = folder({ 'sub/f0.txt': 'inside\n' });
    const disk = await NodeDisk.open(root);
    const shared = new Int32Array(new SharedArrayBuffer(8)); // [0]: stop, [1]: swaps made
    // Swaps `sub` for a link to outside and back as fast as it can, while this thread writes.
    const swapper = new Worker(
      `const { workerData: { root, outside, shared } } = require('node:worker_threads');
       const fs = require('node:fs');
       const sub = root + '/sub', park = root + '/park';
       while (Atomics.load(shared, 0) === 0) {
         try {
           fs.renameSync(sub, park);
           fs.symlinkSync(outside, sub);
           fs.unlinkSync(sub);
           fs.renameSync(park, sub);
           Atomics.add(shared, 1, 1);
         } catch {
           // A write made a new 'sub' in a gap: put the parked folder back (next round if it races again).
           try {
             fs.rmSync(sub, { recursive: true, force: true });
             if (fs.existsSync(park)) fs.renameSync(park, sub);
           } catch {}
         }
       }`,
      { eval: true, workerData: { root, outside, shared } },
    );
    try {
      let writes = 0;
      let refused = 0;
      while ((writes < 300 || Atomics.load(shared, 1) < 100) && readdirSync(outside).length === 1 && writes < 20_000) {
        try {
          await disk.write(`sub/f${writes % 3}.txt`, bytes(`write ${writes}\n`));
        } catch {
          refused++; // refused (a link on the way) or raced away (ENOENT): either way, not outside
        }
        writes++;
      }
      expect(readdirSync(outside)).toEqual(['f0.txt']);
      expect(read(outside, 'f0.txt')).toBe('precious\n');
      expect(refused).toBeLessThan(writes);
    } finally {
      Atomics.store(shared, 0, 1);
      await swapper.terminate();
    }
  });
});

describe('ignored paths, git and the gateway\'s data are outside the workspace', () => {
  it('the tree, the wire and the agent cannot create, rename onto or delete them, and are told why', async () => {
    const root = folder({
      '.gitignore': '.env\nsecret.txt\n/lib/keys.txt\n',
      '.env': 'API_KEY=1\n',
      'lib/keys.txt': 'the owner\'s keys\n',
      'secret.txt': 'secret\n',
      'node_modules/x/index.js': 'module.exports = 1;\n',
      '.flint-data/flint.sqlite': 'the live database\n',
      'a.txt': 'a\n',
    });
    const ctx = await open(root);
    expect(ctx.paths()).toEqual(['.gitignore', 'a.txt']);
    for (const path of ['.env', 'secret.txt', 'node_modules/x/index.js', '.flint-data/flint.sqlite', 'node_modules/y.js']) {
      expect(await ctx.request({ type: 'file.create', path, kind: 'file' })).toMatchObject({ ok: false, code: 'forbidden', message: expect.stringMatching(/ignored/) });
      expect(await ctx.request({ type: 'file.rename', from: 'a.txt', to: path })).toMatchObject({ ok: false, code: 'forbidden' });
      expect(ctx.room.createFile(path, 'from the agent')).toMatchObject({ ok: false, code: 'forbidden' });
      await expect(ctx.disk.write(path, bytes(''))).rejects.toThrow(/ignored/);
      await expect(ctx.disk.remove(path)).rejects.toThrow(/ignored/);
    }
    expect(await ctx.request({ type: 'file.create', path: 'node_modules', kind: 'folder' })).toMatchObject({ ok: false, code: 'forbidden' });
    // A folder moved where one of its files would land on an ignored path.
    expect(await ctx.request({ type: 'file.create', path: 'src/keys.txt', kind: 'file' })).toMatchObject({ ok: true });
    expect(await ctx.request({ type: 'file.rename', from: 'src', to: 'lib' })).toMatchObject({ ok: false, code: 'forbidden', message: expect.stringContaining('lib/keys.txt') });
    expect(await ctx.request({ type: 'file.create', path: 'nested/secret.txt', kind: 'file' })).toMatchObject({ ok: false, code: 'forbidden' });
    await ctx.sync.flushed();
    expect(read(root, '.env')).toBe('API_KEY=1\n');
    expect(read(root, 'secret.txt')).toBe('secret\n');
    expect(read(root, 'node_modules/x/index.js')).toBe('module.exports = 1;\n');
    expect(read(root, '.flint-data/flint.sqlite')).toBe('the live database\n');
    expect(read(root, 'a.txt')).toBe('a\n');
    expect(read(root, 'lib/keys.txt')).toBe('the owner\'s keys\n');
  });

  it('a file written without a mode keeps the one it has on disk (an upload over an executable script)', async () => {
    const root = folder({ 'run.sh': '#!/bin/sh\necho hi\n' });
    chmodSync(join(root, 'run.sh'), 0o755);
    const ctx = await open(root);
    await ctx.disk.write('run.sh', bytes('#!/bin/sh\necho hello\n'));
    expect(statSync(join(root, 'run.sh')).mode & 0o777).toBe(0o755);
    expect(read(root, 'run.sh')).toBe('#!/bin/sh\necho hello\n');
  });

  it('a name longer than a file system allows (255 bytes) is refused at create, with the reason, not accepted and lost', async () => {
    const root = folder({ 'a.txt': 'a\n' });
    const ctx = await open(root);
    const long = 'é'.repeat(150); // 300 bytes in UTF-8
    expect(await ctx.request({ type: 'file.create', path: `${long}.ts`, kind: 'file' })).toMatchObject({ ok: false, code: 'forbidden', message: expect.stringMatching(/255 bytes/) });
    expect(await ctx.request({ type: 'file.rename', from: 'a.txt', to: `src/${long}` })).toMatchObject({ ok: false, code: 'forbidden' });
    expect(await ctx.request({ type: 'file.create', path: `${'é'.repeat(120)}.ts`, kind: 'file' })).toMatchObject({ ok: true });
    expect(ctx.paths()).not.toContain(`${long}.ts`);
  });

  it('the gateway\'s data directory inside the folder, whatever its name, is never shown or written', async () => {
    const root = folder({ 'state/flint.sqlite': 'the live database\n', 'state/demo-owner-token': 'token\n', 'a.txt': 'a\n' });
    const ctx = await open(root, { excluded: [join(root, 'state')] });
    expect(ctx.paths()).toEqual(['a.txt']);
    expect(await ctx.request({ type: 'file.create', path: 'state/flint.sqlite', kind: 'file' })).toMatchObject({ ok: false, code: 'forbidden', message: expect.stringMatching(/data/) });
    expect(await ctx.request({ type: 'file.rename', from: 'a.txt', to: 'state/a.txt' })).toMatchObject({ ok: false, code: 'forbidden' });
    await expect(ctx.disk.write('state/flint.sqlite', bytes(''))).rejects.toThrow(/data/);
    expect(read(root, 'state/flint.sqlite')).toBe('the live database\n');
    // A folder inside the data directory (or the data directory itself) is not opened at all.
    await expect(NodeDisk.open(join(root, 'state'), { excluded: [join(root, 'state')] })).rejects.toThrow(/data directory/);
    await expect(NodeDisk.open(root, { excluded: [root] })).rejects.toThrow(/data directory/);
  });

  it('a zip upload skips them with the reason and writes nothing there', async () => {
    const root = folder({ '.gitignore': '.env\n', '.env': 'API_KEY=1\n', 'a.txt': 'a\n' });
    const gateway = new Gateway({ store: new SqliteStore(':memory:'), clock: systemClock, random: systemRandom });
    const ws = gateway.createWorkspace('Zip');
    const held = gateway.holdRoom(ws.workspaceId)!;
    const sync = new FolderSync({ workspaceId: ws.workspaceId, room: held.room, disk: await NodeDisk.open(root), bases: { get: () => null, set: () => {} }, log: () => {}, writeDelayMs: 5 });
    syncs.push(sync);
    await sync.start();
    const projects = new Map<string, FolderProject>([[ws.workspaceId, sync]]);
    const server = await startServer({ gateway, port: 0, host: '127.0.0.1', webRoot: '/nonexistent-web-root', allowedOrigins: null, publicUrl: null, log: () => {}, projects: { get: (id) => projects.get(id) ?? null } });
    servers.push(server);
    const zip = zipSync({ '.env': strToU8('API_KEY=stolen\n'), 'node_modules/x.js': strToU8('x'), '.flint-data/flint.sqlite': new Uint8Array([0, 1, 2]), 'b.txt': strToU8('b\n') });
    const res = await fetch(`http://127.0.0.1:${server.port}/api/workspaces/${ws.workspaceId}/files`, { method: 'POST', headers: { 'content-type': 'application/zip', authorization: `Bearer ${ws.owner.token}` }, body: zip });
    const body = (await res.json()) as { created: string[]; skipped: Array<{ path: string; reason: string }> };
    expect(body.created).toEqual(['b.txt']);
    expect(body.skipped.map((skip) => skip.path).sort()).toEqual(['.env', '.flint-data/flint.sqlite', 'node_modules/x.js']);
    for (const { reason } of body.skipped) expect(reason).toMatch(/ignored/);
    await until(null, () => read(root, 'b.txt') === 'b\n', 'b.txt on disk');
    expect(read(root, '.env')).toBe('API_KEY=1\n');
    expect(read(root, 'node_modules/x.js')).toBeNull();
    expect(read(root, '.flint-data/flint.sqlite')).toBeNull();
  });
});

describe('what git holds is no way around the edge', () => {
  it('the gateway\'s data, committed with the folder, is neither listed nor readable at HEAD through any link', async () => {
    const root = folder({ 'a.txt': 'a\n', 'state/ws-owner-token': 'the owner token\n' });
    for (const args of [['init', '-q', '-b', 'main'], ['add', '-A'], ['-c', 'user.name=T', '-c', 'user.email=t@t.invalid', '-c', 'commit.gpgsign=false', 'commit', '-q', '-m', 'all']]) {
      execFileSync('git', args, { cwd: root });
    }
    writeFileSync(join(root, 'state/ws-owner-token'), 'changed\n');
    const gateway = new Gateway({ store: new SqliteStore(':memory:'), clock: systemClock, random: systemRandom });
    const ws = gateway.createWorkspace('Git');
    const viewer = gateway.links.create(ws.workspaceId, 'viewer', 'Viewer', null);
    const held = gateway.holdRoom(ws.workspaceId)!;
    const disk = await NodeDisk.open(root, { excluded: [join(root, 'state')] });
    const sync = new FolderSync({ workspaceId: ws.workspaceId, room: held.room, disk, bases: { get: () => null, set: () => {} }, log: () => {}, writeDelayMs: 5 });
    syncs.push(sync);
    await sync.start();
    const server = await startServer({ gateway, port: 0, host: '127.0.0.1', webRoot: '/nonexistent-web-root', allowedOrigins: null, publicUrl: null, log: () => {}, projects: { get: (id) => (id === ws.workspaceId ? sync : null) } });
    servers.push(server);
    const api = (path: string) => fetch(`http://127.0.0.1:${server.port}/api/workspaces/${ws.workspaceId}/${path}`, { headers: { authorization: `Bearer ${viewer.token}` } });
    const head = await api('project/head?path=state/ws-owner-token');
    expect(head.status).toBe(404);
    expect(await head.text()).not.toContain('the owner token');
    const view = (await (await api('project')).json()) as { git: { files: Array<{ path: string }> } };
    expect(view.git.files.map((file) => file.path)).not.toContain('state/ws-owner-token');
    expect((await api('project/head?path=a.txt')).status).toBe(200);
  });
});

describe('what the workspace shows is what the owner\'s disk says', () => {
  it('a .gitignore and the file it ignores, written at the same moment: the file never shows', async () => {
    const root = folder({ 'a.txt': 'a\n' });
    const ctx = await open(root);
    for (let round = 0; round < 4; round++) {
      const dir = `newdir${round}`;
      // Made with its files at once: inotify may watch it only after they were written (the folder is listed then).
      mkdirSync(join(root, dir));
      // Both orders: the watcher may report either first.
      if (round % 2 === 0) {
        writeFileSync(join(root, dir, '.gitignore'), 'secret.txt\n');
        writeFileSync(join(root, dir, 'secret.txt'), 'secret\n');
      } else {
        writeFileSync(join(root, dir, 'secret.txt'), 'secret\n');
        writeFileSync(join(root, dir, '.gitignore'), 'secret.txt\n');
      }
      writeFileSync(join(root, dir, 'visible.txt'), 'visible\n');
      await until(ctx.h, () => ctx.paths().includes(`${dir}/visible.txt`) && ctx.paths().includes(`${dir}/.gitignore`), `${dir} in the tree`);
      await ctx.sync.flushed();
      expect(ctx.paths()).not.toContain(`${dir}/secret.txt`);
    }
  });

  it('an editor who deletes a line of .gitignore is not shown the files it ignored; the owner changing it on disk is', async () => {
    const root = folder({ '.gitignore': 'secret*.txt\n*.log\n', 'a.txt': 'a\n' });
    const ctx = await open(root);
    const gitignore = textOf(ctx.alice, fileIdOf(ctx.alice, '.gitignore'));
    ctx.h.flush();
    gitignore.delete(0, 'secret*.txt\n'.length);
    await until(ctx.h, () => read(root, '.gitignore') === '*.log\n', 'the edited .gitignore on disk');
    await ctx.sync.flushed();

    writeFileSync(join(root, 'secret1.txt'), 'secret\n');
    writeFileSync(join(root, 'after1.txt'), 'after\n');
    await until(ctx.h, () => ctx.paths().includes('after1.txt'), 'after1.txt in the tree');
    expect(ctx.paths()).not.toContain('secret1.txt');
    expect(await ctx.request({ type: 'file.create', path: 'secret2.txt', kind: 'file' })).toMatchObject({ ok: false, code: 'forbidden' });

    // Rules the editor adds hide at once.
    gitignore.insert(gitignore.length, 'hidden.txt\n');
    await until(ctx.h, () => read(root, '.gitignore') === '*.log\nhidden.txt\n', 'the added line on disk');
    await ctx.sync.flushed();
    writeFileSync(join(root, 'hidden.txt'), 'hidden\n');
    writeFileSync(join(root, 'after2.txt'), 'after\n');
    await until(ctx.h, () => ctx.paths().includes('after2.txt'), 'after2.txt in the tree');
    expect(ctx.paths()).not.toContain('hidden.txt');

    // The owner's own change on disk decides.
    writeFileSync(join(root, '.gitignore'), '*.log\n');
    writeFileSync(join(root, 'secret3.txt'), 'shown now\n');
    await until(ctx.h, () => ctx.paths().includes('secret3.txt'), 'secret3.txt, no longer ignored by the owner');
  });

  it('an editor who deletes a .gitignore (or moves it away) is not shown the files it ignored', async () => {
    const root = folder({ '.gitignore': '*.log\n', 'sub/.gitignore': 'secret.txt\n', 'sub/a.txt': 'a\n', 'a.txt': 'a\n' });
    const ctx = await open(root);
    expect(await ctx.request({ type: 'file.delete', path: '.gitignore' })).toMatchObject({ ok: true });
    expect(await ctx.request({ type: 'file.rename', from: 'sub/.gitignore', to: 'moved.gitignore' })).toMatchObject({ ok: true });
    await until(ctx.h, () => read(root, '.gitignore') === null && read(root, 'sub/.gitignore') === null, 'both gone from disk');
    await ctx.sync.flushed();
    writeFileSync(join(root, 'debug.log'), 'log\n');
    writeFileSync(join(root, 'sub/secret.txt'), 'secret\n');
    writeFileSync(join(root, 'after.txt'), 'after\n');
    await until(ctx.h, () => ctx.paths().includes('after.txt'), 'after.txt in the tree');
    expect(ctx.paths()).not.toContain('debug.log');
    expect(ctx.paths()).not.toContain('sub/secret.txt');
  });
});
