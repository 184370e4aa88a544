import type { IncomingMessage, ServerResponse } from 'node:http';
import { baseName, describePathError, FILE_TEXT_KEY, isWithin, normalizePath, validatePath, type Role } from '@flint/protocol';
import { zipSync, type Zippable } from 'fflate';
import type { Gateway } from '../core/Gateway';
import type { Log } from '../core/ports/Log';
import { GATEWAY_ORIGIN } from '../core/LiveDoc';
import type { Room } from '../core/Room';
import type { FolderProject, ProjectRegistry } from '../project/FolderProject';
import { decodeText } from '../project/fileText';
import { findGitFolder, GitError, readGitStatus, readHeadText, type GitFolder } from '../project/git';
import { megabytes, readZipUpload, type ZipUploadEntry } from './zipUpload';
import { bearer, HttpError, json } from './httpJson';

/**
 * REST for real projects (issue 24): what git sees in a folder project, the workspace (or a
 * folder of it) as a zip, and a zip uploaded into it. Every route acts for a link (Bearer token).
 */

const maxUploadBytes = 50 * 1024 * 1024;
/** How long the rest of a refused upload is read (and dropped) before its connection is reset. */
const lingerMs = 2_000;
/** What an upload may unpack to in all: the archive is held unpacked before any of it is applied. */
const maxUnpackedBytes = 256 * 1024 * 1024;
/** NUL in the first 8 KB means binary (git's own test). */
const sniffBytes = 8 * 1024;
const zipTypes = ['application/zip', 'application/x-zip-compressed'];
/** Files an upload creates per change of the tree (about 10 ms of work), with a yield to I/O after each. */
const batchFiles = 50;

const nextIoTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * A yield to I/O once `sliceMs` of work ran since the last one (else nothing to wait for): a loop
 * over a zip's 100k entries, a few microseconds each, held the event loop for a second.
 */
function pacer(sliceMs = 4): () => Promise<void> | undefined {
  let since = performance.now();
  return () => {
    if (performance.now() - since < sliceMs) return undefined;
    return nextIoTurn().then(() => void (since = performance.now()));
  };
}


/** `?path=` as a workspace path (NFC, checked); null when absent or empty: the whole workspace. */
function pathParameter(url: string | undefined, required = false): string | null {
  const query = url?.includes('?') ? url.slice(url.indexOf('?') + 1) : '';
  const requested = new URLSearchParams(query).get('path') ?? '';
  if (requested === '') {
    if (required) throw new HttpError(400, 'Name the file as ?path=<path in the workspace>.');
    return null;
  }
  const path = normalizePath(requested);
  const error = validatePath(path);
  if (error) throw new HttpError(400, `${describePathError(error)} (path "${requested}")`);
  return path;
}

/** `"<name>.zip"` in ASCII, and the name as it is (RFC 6266's `filename*`) when that differs. */
export function attachmentHeader(name: string): string {
  const ascii = name.replace(/[^A-Za-z0-9._ -]+/g, '_').replace(/^[ ._]+|[ ._]+$/g, '').slice(0, 100) || 'workspace';
  const header = `attachment; filename="${ascii}.zip"`;
  if (ascii === name) return header;
  // TextEncoder writes a lone surrogate as U+FFFD: every name has an encoding.
  const encoded = [...new TextEncoder().encode(`${name}.zip`)]
    .map((byte) => (/[A-Za-z0-9.\-_~!$&+^`|#]/.test(String.fromCharCode(byte)) && byte < 0x80 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`))
    .join('');
  return `${header}; filename*=UTF-8''${encoded}`;
}

export interface ProjectApiOptions {
  projects: ProjectRegistry;
  log: Log;
}

/** The project routes; resolves false when the path is not one of them. */
export function createProjectApi(gateway: Gateway, { projects, log }: ProjectApiOptions) {
  const { maxDocBytes, maxFiles } = gateway.config.limits;

  function authenticate(workspaceId: string, req: IncomingMessage): Role {
    if (!gateway.workspaceExists(workspaceId)) throw new HttpError(404, 'No such workspace.');
    const auth = gateway.authenticate(workspaceId, bearer(req));
    if (!auth.ok) throw new HttpError(401, 'This link is invalid, expired or revoked.');
    return auth.link.role;
  }

  async function gitFolderOf(project: FolderProject | null): Promise<GitFolder | null> {
    if (!project) return null;
    try {
      return await findGitFolder(project.root);
    } catch (error) {
      log('warn', 'git did not answer', { workspaceId: project.workspaceId, error: String(error) });
      return null;
    }
  }

  async function projectView(workspaceId: string) {
    const project = projects.get(workspaceId);
    const repo = await gitFolderOf(project);
    if (!project || !repo) return { folder: project !== null, git: null };
    try {
      // Only what the workspace shows: git also sees the gateway's data when it sits in the folder.
      const git = await readGitStatus(repo);
      return { folder: true, git: { ...git, files: git.files.filter((file) => project.outsideWorkspace(file.path) === null) } };
    } catch (error) {
      if (!(error instanceof GitError)) throw error;
      log('warn', 'git status failed', { workspaceId, error: error.message });
      return { folder: true, git: null };
    }
  }

  async function headText(workspaceId: string, path: string) {
    const project = projects.get(workspaceId);
    const repo = await gitFolderOf(project);
    if (!repo) throw new HttpError(404, 'This workspace is not a folder in a git repository: it has no HEAD to compare with.');
    // A committed file outside the workspace (the gateway's data, with its owner token; an
    // ignored file) is not the workspace's to show, whatever git holds.
    const outside = project?.outsideWorkspace(path);
    if (outside) throw new HttpError(404, outside);
    try {
      return { path, text: await readHeadText(repo, path, maxDocBytes) };
    } catch (error) {
      if (!(error instanceof GitError)) throw error;
      log('warn', 'git could not read a file at HEAD', { workspaceId, path, error: error.message });
      throw new HttpError(500, `Git could not read "${path}" at HEAD. Try again; if it persists, the gateway's log says why.`);
    }
  }

  async function download(res: ServerResponse, workspaceId: string, folder: string | null): Promise<void> {
    const held = gateway.holdRoom(workspaceId);
    if (!held) throw new HttpError(404, 'No such workspace.');
    try {
      const { room } = held;
      checkFolder(room, folder, true);
      const project = projects.get(workspaceId);
      // Null prototype: a file may be called "__proto__".
      const files: Zippable = Object.create(null) as Zippable;
      for (const [path, entry] of [...room.entries]) {
        if (entry.kind !== 'file' || (folder !== null && !isWithin(path, folder))) continue;
        const name = folder === null ? path : path.slice(folder.length + 1);
        if (entry.binary) {
          const bytes = project ? await project.readBinary(path) : null;
          if (bytes) files[name] = bytes;
          continue;
        }
        // A folder's file no one opened: the disk's bytes are the file (issue 36).
        if (entry.listed && project) {
          const bytes = await project.readBinary(path);
          if (bytes) files[name] = bytes;
          continue;
        }
        const loaded = room.loadedFiles().has(entry.fileId);
        const live = room.doc(entry.fileId);
        if (!live) continue;
        const text = live.doc.getText(FILE_TEXT_KEY).toString();
        // A folder project's file as the disk holds it when that is the text (a file of mixed line
        // endings is given back as it is), else as the disk spells it (line endings, BOM); elsewhere
        // UTF-8 as typed.
        files[name] = project ? await folderBytes(project, path, text) : new TextEncoder().encode(text);
        // A doc loaded only to be zipped is freed again.
        if (!loaded) room.releaseDoc(entry.fileId);
      }
      const zip = zipSync(files);
      res.writeHead(200, {
        'content-type': 'application/zip',
        'content-length': zip.byteLength,
        'content-disposition': attachmentHeader(folder === null ? room.workspace.name : baseName(folder)),
        'cache-control': 'no-store',
      });
      res.end(zip);
    } finally {
      held.release();
    }
  }

  async function upload(req: IncomingMessage, workspaceId: string, folder: string | null): Promise<UploadResult> {
    const mediaType = req.headers['content-type']?.split(';')[0]?.trim().toLowerCase() ?? '';
    if (!zipTypes.includes(mediaType)) throw new HttpError(415, 'Send the zip as the request body, with "Content-Type: application/zip".');
    const archive = await readBody(req);
    const held = gateway.holdRoom(workspaceId);
    if (!held) throw new HttpError(404, 'No such workspace.');
    try {
      checkFolder(held.room, folder, false);
      const quotaBytes = gateway.storageQuota(workspaceId);
      const sizes = await fileSizes(held.room);
      // Refused on the sizes the zip declares, before any entry is inflated.
      const admit = (declared: ReadonlyArray<{ path: string; bytes: number }>, unpackedBytes: number) => {
        let keptBytes = 0;
        for (const bytes of sizes.values()) keptBytes += bytes;
        if (keptBytes + unpackedBytes <= quotaBytes) return null;
        // Over, counting every file there: the files the zip replaces do not stay.
        const replaced = new Set(declared.map((item) => normalizePath(folder === null ? item.path : `${folder}/${item.path}`)));
        for (const [path, bytes] of sizes) if (replaced.has(path)) keptBytes -= bytes;
        if (keptBytes + unpackedBytes <= quotaBytes) return null;
        return `This upload would leave the workspace holding ${megabytes(keptBytes + unpackedBytes)} of files (${megabytes(keptBytes)} already there, ${megabytes(unpackedBytes)} unpacked from the zip); its storage quota is ${megabytes(quotaBytes)}. Upload less or delete files first, or ask the workspace's owner to raise the quota.`;
      };
      const read = await readZipUpload(archive, { maxEntries: 10 * maxFiles, maxEntryBytes: maxDocBytes, maxUnpackedBytes }, admit);
      if (!read.ok) throw new HttpError(read.reason === 'too-large' ? 413 : 400, read.message);
      return await applyUpload(held.room, projects.get(workspaceId), folder, read.entries, { maxDocBytes, maxFiles });
    } finally {
      held.release();
    }
  }

  function quota(res: ServerResponse, workspaceId: string, role: Role, body: Record<string, unknown> | null): void {
    if (body !== null) {
      if (role !== 'owner') throw new HttpError(403, "Only the workspace's owner can change its storage quota.");
      const bytes = body.quotaBytes;
      if (typeof bytes !== 'number' || !Number.isSafeInteger(bytes) || bytes <= 0) throw new HttpError(400, 'quotaBytes must be a positive whole number of bytes.');
      gateway.setStorageQuota(workspaceId, bytes);
    }
    json(res, 200, { quotaBytes: gateway.storageQuota(workspaceId) });
  }

  async function route(req: IncomingMessage, res: ServerResponse, pathname: string): Promise<boolean> {
    const match = /^\/api\/workspaces\/([\w-]{1,64})\/(project|project\/head|zip|files|quota)$/.exec(pathname);
    if (!match) return false;
    const [, workspaceId = '', what] = match;
    const methods = what === 'files' ? ['POST'] : what === 'quota' ? ['GET', 'PUT'] : ['GET'];
    if (!methods.includes(req.method ?? '')) throw new HttpError(405, `Method not allowed: use ${methods.join(' or ')}.`);
    const role = authenticate(workspaceId, req);
    if (what === 'quota') quota(res, workspaceId, role, req.method === 'PUT' ? await readJsonBody(req) : null);
    else if (what === 'project') json(res, 200, await projectView(workspaceId));
    else if (what === 'project/head') json(res, 200, await headText(workspaceId, pathParameter(req.url, true)!));
    else if (what === 'zip') await download(res, workspaceId, pathParameter(req.url));
    else {
      if (role === 'viewer') throw new HttpError(403, 'Viewers cannot upload files: ask for an editor link.');
      json(res, 200, await upload(req, workspaceId, pathParameter(req.url)));
    }
    return true;
  }

  return async (req: IncomingMessage, res: ServerResponse, pathname: string): Promise<boolean> => {
    try {
      return await route(req, res, pathname);
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      if (!req.complete) await discardRest(req);
      json(res, error.status, { error: error.message });
      return true;
    }
  };
}

async function folderBytes(project: FolderProject, path: string, text: string): Promise<Uint8Array> {
  const onDisk = await project.readBinary(path);
  return onDisk && decodeText(onDisk)?.text === text ? onDisk : project.encodeText(path, text);
}

/** A folder named by `?path=` must be one (or, for an upload, a place one can be). */
function checkFolder(room: Room, folder: string | null, mustExist: boolean): void {
  if (folder === null) return;
  const entry = room.entries.get(folder);
  if (entry?.kind === 'file') throw new HttpError(400, `"${folder}" is a file, not a folder.`);
  if (mustExist && !entry && ![...room.entries.keys()].some((path) => isWithin(path, folder))) {
    throw new HttpError(404, `There is no folder "${folder}" in this workspace.`);
  }
}

/**
 * The body, up to the limit. Not `for await`: leaving that loop destroys the request, and with it
 * the socket, before the 413 can be written.
 */
function readBody(req: IncomingMessage): Promise<Buffer> {
  const tooLarge = new HttpError(413, `The zip is larger than ${maxUploadBytes / 1024 / 1024} MB: upload it in parts (a folder at a time, with ?path=<folder>).`);
  if (Number(req.headers['content-length'] ?? 0) > maxUploadBytes) return Promise.reject(tooLarge);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size <= maxUploadBytes) return void chunks.push(chunk);
      req.off('data', onData);
      reject(tooLarge);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('close', () => reject(new HttpError(400, 'The upload ended before its body was complete.')));
  });
}

/** A small JSON object body (the quota's). */
async function readJsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const mediaType = req.headers['content-type']?.split(';')[0]?.trim().toLowerCase() ?? '';
  if (mediaType !== 'application/json') throw new HttpError(415, 'Send JSON, with "Content-Type: application/json".');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > 4096) throw new HttpError(413, 'The body is too large for a quota.');
    chunks.push(chunk);
  }
  try {
    const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // answered below: not a JSON object
  }
  throw new HttpError(400, 'The body must be a JSON object, e.g. {"quotaBytes": 209715200}.');
}

/**
 * What each file of the workspace holds now, in bytes (text as UTF-8), measured a batch of files
 * at a time: the quota counts what an upload leaves in all.
 */
async function fileSizes(room: Room): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  const pace = pacer();
  for (const [path, entry] of [...room.entries]) {
    await pace();
    if (entry.kind !== 'file') continue;
    if (entry.binary) sizes.set(path, entry.bytes ?? 0);
    else {
      // Read without keeping (or, for a folder's listed file, making) a document.
      const text = room.textOf(entry.fileId);
      if (text !== null) sizes.set(path, Buffer.byteLength(text));
    }
  }
  return sizes;
}

/**
 * Reads and drops what is left of a refused upload before the answer goes out, for a while at
 * most. Node closes a connection whose request is unread once the answer is sent, and closing
 * with bytes unread resets it: a client still sending would lose the answer (what HTTP servers'
 * "lingering close" avoids).
 */
function discardRest(req: IncomingMessage): Promise<void> {
  return new Promise((done) => {
    const finish = () => {
      clearTimeout(timer);
      done();
    };
    const timer = setTimeout(finish, lingerMs);
    req.once('end', finish);
    req.once('close', finish);
    req.resume();
  });
}

export interface UploadResult {
  created: string[];
  updated: string[];
  skipped: Array<{ path: string; reason: string }>;
}

/** UTF-8 that decodes whole (a BOM kept, so the bytes come back as they were), no NUL up front, within the document limit. */
function textOf(bytes: Uint8Array, maxDocBytes: number): string | null {
  if (bytes.byteLength > maxDocBytes || bytes.subarray(0, sniffBytes).includes(0)) return null;
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return null; // not UTF-8: a binary file
  }
}

/** Why an entry's path is not one the upload may write, or null. Every entry is checked here, once. */
function refusedPath(path: string): string | null {
  const pathError = validatePath(path);
  if (pathError) return describePathError(pathError);
  if (path.split('/').some((segment) => segment.toLowerCase() === '.git')) return 'Files inside .git belong to git; they are not uploaded.';
  return null;
}

type Outcome = { path: string; created: boolean } | { path: string; skipped: string } | { path: string; pending: true };

/**
 * Applies an unpacked zip. A folder project gets the entries as what they are, disk bytes: the
 * folder writes them and brings them in as its watcher would (FolderProject.writeFiles), so a
 * downloaded zip uploaded again leaves every file as it was. Elsewhere new text files become
 * documents (created in batches: one change of the tree per batch, not per file) and existing
 * ones get the zip's text in one gateway transaction each. Work is done a batch at a time with a
 * yield to I/O between, so a zip of many entries never holds the event loop. Anything that
 * cannot be written is reported with its reason; nothing outside the workspace (or inside
 * `.git`) is ever written.
 */
async function applyUpload(
  room: Room,
  project: FolderProject | null,
  folder: string | null,
  items: ZipUploadEntry[],
  limits: { maxDocBytes: number; maxFiles: number },
): Promise<UploadResult> {
  let fileCount = 0;
  for (const entry of room.entries.values()) if (entry.kind === 'file') fileCount++;
  const outcomes: Outcome[] = [];
  const seen = new Set<string>();
  const toFolder: Array<{ path: string; bytes: Uint8Array }> = [];
  const fresh: Array<{ path: string; text: string }> = [];
  const pace = pacer();
  for (const item of items) {
    await pace();
    const requested = folder === null ? item.path : `${folder}/${item.path}`;
    const skip = (reason: string) => outcomes.push({ path: requested, skipped: reason });
    if ('skipped' in item) {
      skip(item.skipped);
      continue;
    }
    const path = normalizePath(requested);
    const refused = refusedPath(path);
    if (refused) {
      skip(refused);
      continue;
    }
    const outside = project?.outsideWorkspace(path);
    if (outside) {
      skip(outside);
      continue;
    }
    if (seen.has(path)) {
      skip('The zip holds this path twice; the first one was used.');
      continue;
    }
    seen.add(path);
    const existing = room.entries.get(path);
    if (existing?.kind === 'folder') {
      skip('A folder has this path.');
      continue;
    }
    if (!existing && fileCount >= limits.maxFiles) {
      skip(`The workspace already holds ${limits.maxFiles} files, as many as it can.`);
      continue;
    }
    if (project) {
      // Text as the folder's watcher decodes it; the folder writes the bytes as they are.
      if (existing && !existing.binary && (item.bytes.byteLength > limits.maxDocBytes || !decodeText(item.bytes))) {
        skip('The workspace has this path as a text file; delete it first to replace it with a binary file.');
        continue;
      }
      if (!existing) fileCount++;
      toFolder.push({ path, bytes: item.bytes });
      outcomes.push({ path, pending: true });
      continue;
    }
    const text = textOf(item.bytes, limits.maxDocBytes);
    if (text === null) {
      skip(existing ? 'A binary file has this path; binary files need a folder project.' : 'Binary files need a folder project.');
      continue;
    }
    if (!existing) {
      fileCount++;
      fresh.push({ path, text });
      outcomes.push({ path, pending: true });
      continue;
    }
    outcomes.push(replaceText(room, existing.fileId, path, text));
  }
  const settled = new Map<string, Outcome>();
  if (project) {
    for (const written of await project.writeFiles(toFolder)) {
      settled.set(written.path, written.ok ? { path: written.path, created: written.created } : { path: written.path, skipped: written.message });
    }
  }
  for (let at = 0; at < fresh.length; at += batchFiles) {
    const { created, refused } = room.createFiles(fresh.slice(at, at + batchFiles));
    for (const path of created.keys()) settled.set(path, { path, created: true });
    for (const { path, message } of refused) settled.set(path, { path, skipped: message });
    await nextIoTurn();
  }
  const result: UploadResult = { created: [], updated: [], skipped: [] };
  for (const outcome of outcomes) {
    const final = 'pending' in outcome ? (settled.get(outcome.path) ?? { path: outcome.path, skipped: 'The file went away during the upload.' }) : outcome;
    if ('skipped' in final) result.skipped.push({ path: final.path, reason: final.skipped });
    else if ('pending' in final) continue;
    else if (final.created) result.created.push(final.path);
    else result.updated.push(final.path);
  }
  return result;
}

/** An existing document gets the zip's text, in one gateway transaction; a doc loaded only for this is freed again. */
function replaceText(room: Room, fileId: string, path: string, text: string): Outcome {
  const loaded = room.loadedFiles().has(fileId);
  const live = room.doc(fileId);
  if (!live) return { path, skipped: 'The file went away during the upload.' };
  const doc = live.doc.getText(FILE_TEXT_KEY);
  if (doc.toString() !== text) {
    live.doc.transact(() => {
      doc.delete(0, doc.length);
      doc.insert(0, text);
    }, GATEWAY_ORIGIN);
    // The replaced text is history: compacted away (wouldExceedLimit compacts a doc near its
    // limit, and a store that fails only leaves it for later), it does not count against it.
    live.wouldExceedLimit(0);
  }
  if (!loaded) room.releaseDoc(fileId);
  return { path, created: false };
}
