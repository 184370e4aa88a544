import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import { FILE_TEXT_KEY, INDEX_DOC_ID } from '@flint/protocol';
import { strToU8, unzipSync, zipSync, type Zippable } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Gateway } from '../core/Gateway';
import { defaultConfig } from '../core/GatewayConfig';
import type { FolderProject, ProjectRegistry, WrittenFile } from '../project/FolderProject';
import { decodeText } from '../project/fileText';
import { SqliteStore } from '../storage/SqliteStore';
import { startServer, type RunningServer } from './httpServer';
import { attachmentHeader } from './projectApi';
import { systemClock } from './systemClock';
import { systemRandom } from './systemRandom';

/** The project routes over real sockets on port 0, with real git in temporary folders. */
const made: string[] = [];
const servers: RunningServer[] = [];
const projects = new Map<string, FolderProject>();
const registry: ProjectRegistry = { get: (id) => projects.get(id) ?? null };
let gateway: Gateway;
let base: string;

async function serve(config?: ConstructorParameters<typeof Gateway>[0]['config']) {
  const g = new Gateway({ store: new SqliteStore(':memory:'), clock: systemClock, random: systemRandom, config });
  const server = await startServer({ gateway: g, port: 0, host: '127.0.0.1', webRoot: '/nonexistent-web-root', allowedOrigins: null, publicUrl: null, log: () => {}, projects: registry });
  servers.push(server);
  return { gateway: g, base: `http://127.0.0.1:${server.port}`, port: server.port };
}

beforeAll(async () => ({ gateway, base } = await serve()));
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  made.forEach((dir) => rmSync(dir, { recursive: true, force: true }));
});

function tempDir(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'flint-project-')));
  made.push(dir);
  return dir;
}

/** A folder project as the REST routes need one: binary files on disk, confined to the folder. */
class TempFolderProject implements FolderProject {
  constructor(
    readonly workspaceId: string,
    readonly root: string,
    private readonly owner: Gateway,
  ) {}

  /** As a CRLF folder would: the zip must give files back as the disk spells them. */
  encodeText(_path: string, text: string): Uint8Array {
    return new TextEncoder().encode(text.replace(/\n/g, '\r\n'));
  }

  outsideWorkspace(): string | null {
    return null;
  }

  private inside(path: string): string | null {
    const full = resolve(this.root, path);
    return full.startsWith(this.root + sep) ? full : null;
  }

  /** Bytes to disk, then into the tree: text as the watcher decodes it, binary files as entries. */
  async writeFiles(files: ReadonlyArray<{ path: string; bytes: Uint8Array }>) {
    const outcomes: WrittenFile[] = [];
    for (const { path, bytes } of files) {
      const full = this.inside(path);
      if (!full) {
        outcomes.push({ path, ok: false, message: 'outside the folder' });
        continue;
      }
      await mkdir(dirname(full), { recursive: true });
      await writeFile(full, bytes);
      const held = this.owner.holdRoom(this.workspaceId)!;
      const exists = held.room.entries.has(path);
      const decoded = decodeText(bytes);
      if (!exists) {
        if (decoded) held.room.createFile(path, decoded.text, false);
        else held.room.createBinaryFile(path, bytes.byteLength);
      }
      held.release();
      outcomes.push({ path, ok: true, created: !exists });
    }
    return outcomes;
  }

  async readBinary(path: string) {
    const full = this.inside(path);
    return full ? new Uint8Array(await readFile(full).catch(() => null) ?? new Uint8Array()) : null;
  }
}

function textOf(on: Gateway, workspaceId: string, path: string): string | undefined {
  const fileId = on.holdRoom(workspaceId)!.room.fileIdAt(path)!;
  return on.document(workspaceId, fileId)?.getText(FILE_TEXT_KEY).toString();
}

function workspace(name = 'Real', on = gateway) {
  const { workspaceId, owner } = on.createWorkspace(name, { 'README.md': `# ${name}\n` });
  const viewer = on.links.create(workspaceId, 'viewer', 'Viewer', null);
  return { workspaceId, token: owner.token, viewerToken: viewer.token };
}

function folderWorkspace(root: string, name = 'Folder') {
  const created = workspace(name);
  projects.set(created.workspaceId, new TempFolderProject(created.workspaceId, root, gateway));
  return created;
}

async function getJson(path: string, token?: string, at = base) {
  const res = await fetch(at + path, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function upload(path: string, token: string | null, body: Uint8Array, at = base) {
  const headers: Record<string, string> = { 'content-type': 'application/zip' };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(at + path, { method: 'POST', headers, body: new Uint8Array(body) });
  return { status: res.status, body: (await res.json()) as { created: string[]; updated: string[]; skipped: Array<{ path: string; reason: string }>; error?: string } };
}

async function download(path: string, token: string) {
  const res = await fetch(base + path, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/zip');
  return { disposition: res.headers.get('content-disposition'), files: unzipSync(new Uint8Array(await res.arrayBuffer())) };
}

function zipOf(files: Record<string, Uint8Array | string>): Uint8Array {
  const zippable: Zippable = Object.create(null) as Zippable;
  for (const [name, content] of Object.entries(files)) zippable[name] = typeof content === 'string' ? strToU8(content) : content;
  return zipSync(zippable);
}

const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0xff, 0xfe]);
const texts = {
  'a.ts': 'export const a = 1;\n',
  'src/crlf.ts': 'line one\r\nline two\r\n',
  'src/bom.txt': '\ufeffstarts with a byte order mark\n',
  'docs/caf\u00e9.md': '# Café ☕\n',
  'empty.txt': '',
};

describe('zip upload and download', () => {
  it('a round trip gives back the same bytes for every file; a second upload updates in place', async () => {
    const { workspaceId, token } = workspace();
    const first = await upload(`/api/workspaces/${workspaceId}/files`, token, zipOf({ ...texts, 'src/': new Uint8Array(), '__MACOSX/._a.ts': png, 'image.png': png }));
    expect(first.status).toBe(200);
    expect(first.body.created.sort()).toEqual(Object.keys(texts).sort());
    expect(first.body.skipped).toEqual([{ path: 'image.png', reason: 'Binary files need a folder project.' }]);

    const { files, disposition } = await download(`/api/workspaces/${workspaceId}/zip`, token);
    expect(disposition).toBe('attachment; filename="Real.zip"');
    expect(Object.keys(files).sort()).toEqual(['README.md', ...Object.keys(texts)].sort());
    for (const [name, text] of Object.entries(texts)) expect(files[name]).toEqual(strToU8(text));

    const second = await upload(`/api/workspaces/${workspaceId}/files`, token, zipOf({ 'a.ts': 'export const a = 2;\n', 'README.md': '# Real\n' }));
    expect(second.body).toEqual({ created: [], updated: ['a.ts', 'README.md'], skipped: [] });
    const fileId = gateway.holdRoom(workspaceId)!.room.fileIdAt('a.ts')!;
    expect(gateway.document(workspaceId, fileId)?.getText(FILE_TEXT_KEY).toString()).toBe('export const a = 2;\n');
  });

  it('a folder project takes binary files too, and ?path= names the folder both ways', async () => {
    const root = tempDir();
    const { workspaceId, token } = folderWorkspace(root, 'Ignored name');
    const uploaded = await upload(`/api/workspaces/${workspaceId}/files?path=assets`, token, zipOf({ 'logo.png': png, 'notes/n.md': 'n\n' }));
    expect(uploaded.body).toEqual({ created: ['assets/logo.png', 'assets/notes/n.md'], updated: [], skipped: [] });
    expect(new Uint8Array(readFileSync(join(root, 'assets/logo.png')))).toEqual(png);

    const { files, disposition } = await download(`/api/workspaces/${workspaceId}/zip?path=assets`, token);
    expect(disposition).toBe('attachment; filename="assets.zip"');
    // Files as the disk holds them, binary or text.
    expect(files).toEqual({ 'logo.png': png, 'notes/n.md': strToU8('n\n') });
    // Text the disk does not hold yet: as the folder spells it (this test project is CRLF).
    const notes = gateway.document(workspaceId, gateway.holdRoom(workspaceId)!.room.fileIdAt('assets/notes/n.md')!)!.getText(FILE_TEXT_KEY);
    notes.insert(0, 'm\n');
    expect((await download(`/api/workspaces/${workspaceId}/zip?path=assets`, token)).files['notes/n.md']).toEqual(strToU8('m\r\nn\r\n'));
    expect(Object.keys((await download(`/api/workspaces/${workspaceId}/zip`, token)).files).sort()).toEqual(['README.md', 'assets/logo.png', 'assets/notes/n.md']);
  });

  it('entries that would land outside the workspace, or in .git, are skipped with a reason and never written', async () => {
    const root = tempDir();
    const project = join(root, 'project');
    mkdirSync(project);
    const { workspaceId, token } = folderWorkspace(project);
    const evil = ['../evil.txt', '/abs.txt', 'sub\\..\\..\\win.txt', 'ok/../../x.txt', './dot.txt', '.git/config', 'sub/.GIT/hooks/pre-commit'];
    const zip = zipOf(Object.fromEntries([...evil.map((name) => [name, 'pwned\n']), ['../bin.png', png], ['fine.txt', 'fine\n']]));
    const { body } = await upload(`/api/workspaces/${workspaceId}/files`, token, zip);
    expect(body.created).toEqual(['fine.txt']);
    expect(body.skipped.map((s) => s.path).sort()).toEqual([...evil, '../bin.png'].sort());
    for (const { reason } of body.skipped) expect(reason).toMatch(/"\.\."|"\/"|"\\"|\.git/);
    expect(existsSync(join(root, 'evil.txt')) || existsSync(join(root, 'bin.png')) || existsSync('/abs.txt')).toBe(false);
    const paths = [...gateway.holdRoom(workspaceId)!.room.entries.keys()].sort();
    expect(paths).toEqual(['README.md', 'fine.txt']);
  });

  it('a viewer can download but not upload; no token is a 401', async () => {
    const { workspaceId, viewerToken } = workspace();
    expect((await download(`/api/workspaces/${workspaceId}/zip`, viewerToken)).files['README.md']).toEqual(strToU8('# Real\n'));
    const refused = await upload(`/api/workspaces/${workspaceId}/files`, viewerToken, zipOf({ 'x.ts': 'x' }));
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatch(/Viewers/);
    expect((await upload(`/api/workspaces/${workspaceId}/files`, null, zipOf({ 'x.ts': 'x' }))).status).toBe(401);
    expect((await getJson(`/api/workspaces/${workspaceId}/zip`)).status).toBe(401);
    expect((await getJson(`/api/workspaces/${workspaceId}/zip`, 'not-a-token')).status).toBe(401);
  });

  it('a body announced over 50 MB is refused with 413 before it is sent; one that grows past it, once it does', async () => {
    const { workspaceId, token } = workspace();
    const send = (headers: Record<string, string>, write: (req: ReturnType<typeof request>) => void) =>
      new Promise<{ status: number; body: string }>((done, fail) => {
        const req = request({ host: '127.0.0.1', port: Number(new URL(base).port), path: `/api/workspaces/${workspaceId}/files`, method: 'POST', agent: false, headers: { 'content-type': 'application/zip', authorization: `Bearer ${token}`, ...headers } }, (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => done({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : fail(error)));
        write(req);
      });
    const announced = await send({ 'content-length': String(50 * 1024 * 1024 + 1) }, (req) => req.write(Buffer.alloc(1024)));
    expect(announced.status).toBe(413);
    expect(announced.body).toMatch(/larger than 50 MB/);
    const chunk = Buffer.alloc(1024 * 1024);
    const streamed = await send({ 'transfer-encoding': 'chunked' }, (req) => {
      let left = 60;
      const more = () => {
        while (left-- > 0 && !req.destroyed) if (!req.write(chunk)) return req.once('drain', more);
        req.end();
      };
      more();
    });
    expect(streamed.status).toBe(413);
  });

  it('a malformed zip is a 400 with a sentence, and nothing of it is applied', async () => {
    const { workspaceId, token } = workspace();
    const notZip = await upload(`/api/workspaces/${workspaceId}/files`, token, strToU8('this is not a zip'));
    expect(notZip.status).toBe(400);
    expect(notZip.body.error).toMatch(/not a valid zip archive/);

    // A good first entry, then one whose data no longer matches its checksum.
    const zip = zipOf({ 'good.ts': 'good\n', 'bad.ts': 'x'.repeat(1000) });
    const damaged = Buffer.from(zip);
    const at = damaged.lastIndexOf(Buffer.from('PK\u0003\u0004', 'latin1'));
    const inData = at + 30 + 'bad.ts'.length + 2;
    damaged.writeUInt8(damaged.readUInt8(inData) ^ 0xff, inData);
    const refused = await upload(`/api/workspaces/${workspaceId}/files`, token, damaged);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(/bad\.ts/);
    expect([...gateway.holdRoom(workspaceId)!.room.entries.keys()]).toEqual(['README.md']);

    const wrongType = await fetch(`${base}/api/workspaces/${workspaceId}/files`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });
    expect(wrongType.status).toBe(415);
  });

  it('files past the workspace limit are skipped, the rest created', async () => {
    const small = await serve({ limits: { ...defaultConfig.limits, maxFiles: 3 } });
    const { workspaceId, token } = workspace('Small', small.gateway);
    const { body } = await upload(`/api/workspaces/${workspaceId}/files`, token, zipOf({ 'a.ts': 'a', 'b.ts': 'b', 'c.ts': 'c' }), small.base);
    expect(body.created).toEqual(['a.ts', 'b.ts']);
    expect(body.skipped).toEqual([{ path: 'c.ts', reason: 'The workspace already holds 3 files, as many as it can.' }]);
  });

  it('a zip with more entries than are read (ten per file the workspace may hold) is a 413, and nothing of it is applied', async () => {
    const small = await serve({ limits: { ...defaultConfig.limits, maxFiles: 3 } });
    const { workspaceId, token } = workspace('Small', small.gateway);
    const zip = zipOf(Object.fromEntries(Array.from({ length: 31 }, (_, i) => [`f${i}.ts`, 'x'])));
    const refused = await upload(`/api/workspaces/${workspaceId}/files`, token, zip, small.base);
    expect(refused).toEqual({ status: 413, body: { error: 'The zip holds 31 entries; at most 30 are read.' } });
    expect([...small.gateway.holdRoom(workspaceId)!.room.entries.keys()]).toEqual(['README.md']);
  });
});

describe('large uploads and the storage quota', () => {
  const many = (count: number, text = (i: number) => `export const v${i} = ${i};\n`) => zipOf(Object.fromEntries(Array.from({ length: count }, (_, i) => [`src/m${i % 50}/f${i}.ts`, text(i)])));

  it('an upload changes the tree in batches, not once per file: linear in its entries', async () => {
    const big = await serve({ limits: { ...defaultConfig.limits, maxFiles: 3000 } });
    const { workspaceId, token } = workspace('Many', big.gateway);
    let treeChanges = 0;
    big.gateway.document(workspaceId, INDEX_DOC_ID)!.on('update', () => treeChanges++);
    const { status, body } = await upload(`/api/workspaces/${workspaceId}/files`, token, many(1000), big.base);
    expect(status).toBe(200);
    expect(body.created).toHaveLength(1000);
    expect(body.created.slice(0, 3)).toEqual(['src/m0/f0.ts', 'src/m1/f1.ts', 'src/m2/f2.ts']);
    // 50 files per change of the tree: 20 changes (one per file was 1,000, each walking the whole tree).
    expect(treeChanges).toBeLessThanOrEqual(20);
    const room = big.gateway.holdRoom(workspaceId)!.room;
    // The created files' docs were written and freed, not held in memory.
    expect(room.loadedFiles().size).toBeLessThanOrEqual(1);
    expect(textOf(big.gateway, workspaceId, 'src/m7/f957.ts')).toBe('export const v957 = 957;\n');
  });

  it('the gateway answers other requests while a large upload is applied', async () => {
    const big = await serve({ limits: { ...defaultConfig.limits, maxFiles: 5000 } });
    const { workspaceId, token } = workspace('Probe', big.gateway);
    const order: string[] = [];
    let probe: Promise<void> | null = null;
    // Once the upload starts changing the tree (its zip read, its files being created), ask for /healthz.
    big.gateway.document(workspaceId, INDEX_DOC_ID)!.on('update', () => {
      probe ??= fetch(`${big.base}/healthz`).then((res) => void order.push(`probe ${res.status}`));
    });
    const uploaded = upload(`/api/workspaces/${workspaceId}/files`, token, many(1500), big.base).then((res) => void order.push(`upload ${res.status}`));
    await uploaded;
    await probe;
    expect(order).toEqual(['probe 200', 'upload 200']);
  });

  it('an upload past the workspace\'s storage quota is a 413 with the numbers, refused before it is unpacked; the owner can raise the quota', async () => {
    const small = await serve({ storageQuotaBytes: 64 * 1024 });
    const { workspaceId, token } = workspace('Quota', small.gateway);
    const editor = small.gateway.links.create(workspaceId, 'editor', 'Editor', null).token;
    const zip = zipOf({ 'a.txt': 'a'.repeat(40 * 1024), 'b.txt': 'b'.repeat(40 * 1024) });
    const refused = await upload(`/api/workspaces/${workspaceId}/files`, token, zip, small.base);
    expect(refused.status).toBe(413);
    expect(refused.body.error).toBe(
      "This upload would leave the workspace holding 0.1 MB of files (0 MB already there, 0.1 MB unpacked from the zip); its storage quota is 0.1 MB. Upload less or delete files first, or ask the workspace's owner to raise the quota.",
    );
    expect([...small.gateway.holdRoom(workspaceId)!.room.entries.keys()]).toEqual(['README.md']);

    const put = (who: string, body: unknown) =>
      fetch(`${small.base}/api/workspaces/${workspaceId}/quota`, { method: 'PUT', headers: { authorization: `Bearer ${who}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await put(editor, { quotaBytes: 1 << 20 })).status).toBe(403);
    expect((await put(token, { quotaBytes: -1 })).status).toBe(400);
    expect(await (await put(token, { quotaBytes: 1 << 20 })).json()).toEqual({ quotaBytes: 1 << 20 });
    expect((await getJson(`/api/workspaces/${workspaceId}/quota`, editor, small.base)).body).toEqual({ quotaBytes: 1 << 20 });
    const accepted = await upload(`/api/workspaces/${workspaceId}/files`, token, zip, small.base);
    expect(accepted.body.created).toEqual(['a.txt', 'b.txt']);

    // What is there counts, but not the files the zip replaces.
    const again = await upload(`/api/workspaces/${workspaceId}/files`, token, zip, small.base);
    expect(again.body.updated).toEqual(['a.txt', 'b.txt']);
    const more = await upload(`/api/workspaces/${workspaceId}/files`, token, zipOf({ 'c.txt': 'c'.repeat(1000 * 1024) }), small.base);
    expect(more.status).toBe(413);
    expect(more.body.error).toMatch(/holding 1\.1 MB of files \(0\.1 MB already there, 1 MB unpacked from the zip\); its storage quota is 1 MB/);
  });
});

describe('what git sees', () => {
  function git(cwd: string, ...args: string[]): void {
    execFileSync('git', args, { cwd });
  }

  it('a folder project in a subfolder of a repository: its branch, its changed files, and their text at HEAD', async () => {
    const root = tempDir();
    git(root, 'init', '-q', '-b', 'main');
    git(root, 'config', 'user.name', 'Flint Test');
    git(root, 'config', 'user.email', 'test@flint.invalid');
    mkdirSync(join(root, 'app'));
    writeFileSync(join(root, 'app', 'main.ts'), 'committed\n');
    writeFileSync(join(root, 'app', 'old.ts'), 'old\n');
    git(root, 'add', '-A');
    git(root, '-c', 'commit.gpgsign=false', 'commit', '-q', '-m', 'first');
    writeFileSync(join(root, 'app', 'main.ts'), 'edited\n');
    git(root, 'mv', 'app/old.ts', 'app/new.ts');
    writeFileSync(join(root, 'app', 'untracked.ts'), 'loose\n');

    const { workspaceId, viewerToken } = folderWorkspace(join(root, 'app'));
    const view = await getJson(`/api/workspaces/${workspaceId}/project`, viewerToken);
    expect(view.status).toBe(200);
    expect(view.body).toEqual({
      folder: true,
      git: {
        branch: 'main',
        files: expect.arrayContaining([
          { path: 'main.ts', status: 'modified' },
          { path: 'new.ts', status: 'renamed' },
          { path: 'untracked.ts', status: 'untracked' },
        ]),
      },
    });
    expect(await getJson(`/api/workspaces/${workspaceId}/project/head?path=main.ts`, viewerToken)).toEqual({ status: 200, body: { path: 'main.ts', text: 'committed\n' } });
    expect((await getJson(`/api/workspaces/${workspaceId}/project/head?path=untracked.ts`, viewerToken)).body).toEqual({ path: 'untracked.ts', text: null });
    expect((await getJson(`/api/workspaces/${workspaceId}/project/head?path=../secret`, viewerToken)).status).toBe(400);
    expect((await getJson(`/api/workspaces/${workspaceId}/project/head`, viewerToken)).status).toBe(400);
  });

  it('a workspace that is not a folder project, or a folder outside git: folder false or git null, and no HEAD (404)', async () => {
    const plain = workspace();
    expect(await getJson(`/api/workspaces/${plain.workspaceId}/project`, plain.token)).toEqual({ status: 200, body: { folder: false, git: null } });
    expect((await getJson(`/api/workspaces/${plain.workspaceId}/project/head?path=README.md`, plain.token)).status).toBe(404);

    const loose = folderWorkspace(tempDir());
    expect((await getJson(`/api/workspaces/${loose.workspaceId}/project`, loose.token)).body).toEqual({ folder: true, git: null });
    expect((await getJson(`/api/workspaces/${loose.workspaceId}/project/head?path=README.md`, loose.token)).status).toBe(404);
    expect((await getJson('/api/workspaces/nope/project', loose.token)).status).toBe(404);
    expect((await getJson(`/api/workspaces/${loose.workspaceId}/project`)).status).toBe(401);
  });
});

describe('the download name', () => {
  it('is ASCII in filename, and the name as it is in filename* when that differs', () => {
    expect(attachmentHeader('My project')).toBe('attachment; filename="My project.zip"');
    expect(attachmentHeader('a"b\r\nc')).toBe(`attachment; filename="a_b_c.zip"; filename*=UTF-8''a%22b%0D%0Ac.zip`);
    expect(attachmentHeader('Проект')).toBe(`attachment; filename="workspace.zip"; filename*=UTF-8''${encodeURIComponent('Проект')}.zip`);
  });
});
