/**
 * Zip upload into a folder project on a real disk (issue 32 #7): the real gateway over HTTP on
 * port 0, FolderSync over NodeDisk in temporary folders. A zip holds disk bytes.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { INDEX_DOC_ID } from '@flint/protocol';
import { strToU8, unzipSync, zipSync, type Zippable } from 'fflate';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Gateway } from '../core/Gateway';
import { NodeDisk } from '../project/NodeDisk';
import type { FolderProject } from '../project/FolderProject';
import { FolderSync } from '../project/FolderSync';
import { SqliteStore } from '../storage/SqliteStore';
import { startServer, type RunningServer } from './httpServer';
import { systemClock } from './systemClock';
import { systemRandom } from './systemRandom';

const made: string[] = [];
const syncs: FolderSync[] = [];
const servers: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(syncs.splice(0).map((sync) => sync.stop()));
});
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** Every file under `root` (but .git), as bytes by relative path. */
function snapshot(root: string): Record<string, Buffer> {
  const files: Record<string, Buffer> = {};
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else files[relative(root, full)] = readFileSync(full);
    }
  };
  walk(root);
  return files;
}

function folder(files: Record<string, string | Uint8Array>): string {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'flint-upload-')));
  made.push(root);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

async function serveFolders() {
  const gateway = new Gateway({ store: new SqliteStore(':memory:'), clock: systemClock, random: systemRandom });
  const projects = new Map<string, FolderProject>();
  const server = await startServer({ gateway, port: 0, host: '127.0.0.1', webRoot: '/nonexistent-web-root', allowedOrigins: null, publicUrl: null, log: () => {}, projects: { get: (id) => projects.get(id) ?? null } });
  servers.push(server);
  const base = `http://127.0.0.1:${server.port}`;
  async function open(root: string) {
    const { workspaceId, owner } = gateway.createWorkspace('Folder');
    const held = gateway.holdRoom(workspaceId)!;
    // The seeded README is not this folder's: the workspace starts as the folder.
    held.room.apply({ type: 'file.delete', requestId: 0, path: 'README.md' });
    const store = { values: new Map<string, string>() };
    const sync = new FolderSync({ workspaceId, room: held.room, disk: await NodeDisk.open(root), bases: { get: (k) => store.values.get(k) ?? null, set: (k, v) => void store.values.set(k, v) }, log: () => {}, writeDelayMs: 0 });
    syncs.push(sync);
    await sync.start();
    projects.set(workspaceId, sync);
    const auth = { authorization: `Bearer ${owner.token}` };
    return {
      sync,
      treeChanges: () => {
        let changes = 0;
        gateway.document(workspaceId, INDEX_DOC_ID)!.on('update', () => changes++);
        return () => changes;
      },
      download: async () => new Uint8Array(await (await fetch(`${base}/api/workspaces/${workspaceId}/zip`, { headers: auth })).arrayBuffer()),
      upload: async (zip: Uint8Array) => {
        const res = await fetch(`${base}/api/workspaces/${workspaceId}/files`, { method: 'POST', headers: { ...auth, 'content-type': 'application/zip' }, body: new Uint8Array(zip) });
        return { status: res.status, body: (await res.json()) as { created: string[]; updated: string[]; skipped: unknown[] } };
      },
    };
  }
  return { open };
}

const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0xff, 0xfe]);
/** Every way a text file is spelled on disk that a round trip must keep. */
const spellings = {
  'lf.ts': 'export const a = 1;\n',
  'crlf.txt': 'line one\r\nline two\r\n',
  'bom.txt': '\ufeffstarts with a byte order mark\n',
  'bom-crlf.cs': '\ufeffclass A {\r\n}\r\n',
  'mixed.txt': 'windows\r\nunix\nwindows again\r\n',
  'no-newline.md': 'last line without one',
  'sub/deep/caf\u00e9.md': '# Café ☕\r\n',
  'image.png': png,
};

describe('a zip uploaded into a folder project holds disk bytes', () => {
  it('download then upload leaves the folder byte-identical: CRLF, BOM, mixed line endings, binary', async () => {
    const { open } = await serveFolders();
    const root = folder(spellings);
    const before = snapshot(root);
    const project = await open(root);
    const zip = await project.download();
    const { status, body } = await project.upload(zip);
    expect(status).toBe(200);
    expect(body.updated.sort()).toEqual(Object.keys(spellings).sort());
    expect(body.skipped).toEqual([]);
    await project.sync.flushed();
    expect(snapshot(root)).toEqual(before);
    // And once more: what the folder gives is what it took (entry by entry: a zip's bytes hold the time it was made).
    expect(unzipSync(await project.download())).toEqual(unzipSync(zip));
  });

  it('the same zip uploaded into an empty folder writes the same bytes there', async () => {
    const { open } = await serveFolders();
    const source = await open(folder(spellings));
    const target = folder({});
    const project = await open(target);
    const { body } = await project.upload(await source.download());
    expect(body.created.sort()).toEqual(Object.keys(spellings).sort());
    await project.sync.flushed();
    expect(snapshot(target)).toEqual(snapshot(folder(spellings)));
  });

  it('many new files are written and created in batches: one change of the tree per 50 files, not one per file', async () => {
    const { open } = await serveFolders();
    const root = folder({});
    const project = await open(root);
    const files: Zippable = Object.create(null) as Zippable;
    for (let i = 0; i < 300; i++) files[`pkg/m${i % 7}/f${i}.js`] = strToU8(i % 2 ? `module.exports = ${i};\r\n` : `\ufeffexport default ${i};\n`);
    const counted = project.treeChanges();
    const { status, body } = await project.upload(zipSync(files));
    expect(status).toBe(200);
    expect(body.created).toHaveLength(300);
    expect(counted()).toBeLessThanOrEqual(300 / 50 + 1);
    await project.sync.flushed();
    const written = snapshot(root);
    expect(Object.keys(written)).toHaveLength(300);
    for (const [path, bytes] of Object.entries(files)) expect(written[path]).toEqual(Buffer.from(bytes as Uint8Array));
  });
});
