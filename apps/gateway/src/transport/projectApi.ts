import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { crc32, inflateRaw } from 'node:zlib';
import { baseName, describePathError, FILE_TEXT_KEY, isWithin, normalizePath, validatePath, type Role } from '@flint/protocol';
import { zipSync, type Zippable } from 'fflate';
import type { Gateway } from '../core/Gateway';
import type { Log } from '../core/GatewayContext';
import { GATEWAY_ORIGIN } from '../core/LiveDoc';
import type { Room } from '../core/Room';
import type { FolderProject, ProjectRegistry } from '../project/FolderProject';
import { findGitFolder, GitError, readGitStatus, readHeadText, type GitFolder } from '../project/git';

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

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

function bearer(req: IncomingMessage): string {
  const match = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
  if (!match?.[1]) throw new HttpError(401, 'Send the link token as "Authorization: Bearer <token>".');
  return match[1];
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
      return { folder: true, git: await readGitStatus(repo) };
    } catch (error) {
      if (!(error instanceof GitError)) throw error;
      log('warn', 'git status failed', { workspaceId, error: error.message });
      return { folder: true, git: null };
    }
  }

  async function headText(workspaceId: string, path: string) {
    const repo = await gitFolderOf(projects.get(workspaceId));
    if (!repo) throw new HttpError(404, 'This workspace is not a folder in a git repository: it has no HEAD to compare with.');
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
        const live = room.doc(entry.fileId);
        if (live) files[name] = new TextEncoder().encode(live.doc.getText(FILE_TEXT_KEY).toString());
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
    const items = await readZip(archive, { maxEntries: 10 * maxFiles, maxEntryBytes: maxDocBytes, maxUnpackedBytes });
    const held = gateway.holdRoom(workspaceId);
    if (!held) throw new HttpError(404, 'No such workspace.');
    try {
      checkFolder(held.room, folder, false);
      return await applyUpload(held.room, projects.get(workspaceId), folder, items, { maxDocBytes, maxFiles });
    } finally {
      held.release();
    }
  }

  async function route(req: IncomingMessage, res: ServerResponse, pathname: string): Promise<boolean> {
    const match = /^\/api\/workspaces\/([\w-]{1,64})\/(project|project\/head|zip|files)$/.exec(pathname);
    if (!match) return false;
    const [, workspaceId = '', what] = match;
    const method = what === 'files' ? 'POST' : 'GET';
    if (req.method !== method) throw new HttpError(405, `Method not allowed: use ${method}.`);
    const role = authenticate(workspaceId, req);
    if (what === 'project') json(res, 200, await projectView(workspaceId));
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
      if (error instanceof ZipError) error = new HttpError(error.status, error.message);
      if (!(error instanceof HttpError)) throw error;
      if (!req.complete) await discardRest(req);
      json(res, error.status, { error: error.message });
      return true;
    }
  };
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

/**
 * Applies an unpacked zip: new text files become documents, existing ones get the zip's text in
 * one gateway transaction, binary files go to the folder's disk. Anything that cannot be written
 * is reported with its reason; nothing outside the workspace (or inside `.git`) is ever written.
 */
async function applyUpload(
  room: Room,
  project: FolderProject | null,
  folder: string | null,
  items: ZipItem[],
  limits: { maxDocBytes: number; maxFiles: number },
): Promise<UploadResult> {
  const result: UploadResult = { created: [], updated: [], skipped: [] };
  let fileCount = [...room.entries.values()].filter((entry) => entry.kind === 'file').length;
  const seen = new Set<string>();
  for (const item of items) {
    const requested = folder === null ? item.name : `${folder}/${item.name}`;
    const skip = (reason: string) => result.skipped.push({ path: requested, reason });
    if ('skipped' in item) {
      skip(item.skipped);
      continue;
    }
    const path = normalizePath(requested);
    const pathError = validatePath(path);
    if (pathError) {
      skip(describePathError(pathError));
      continue;
    }
    if (path.split('/').some((segment) => segment.toLowerCase() === '.git')) {
      skip('Files inside .git belong to git; they are not uploaded.');
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
    const text = textOf(item.bytes, limits.maxDocBytes);
    if (!existing && fileCount >= limits.maxFiles) {
      skip(`The workspace already holds ${limits.maxFiles} files, as many as it can.`);
      continue;
    }
    if (text !== null && !existing?.binary) {
      if (existing) {
        const live = room.doc(existing.fileId);
        if (!live) {
          skip('The file went away during the upload.');
          continue;
        }
        const doc = live.doc.getText(FILE_TEXT_KEY);
        if (doc.toString() !== text) {
          live.doc.transact(() => {
            doc.delete(0, doc.length);
            doc.insert(0, text);
          }, GATEWAY_ORIGIN);
          // The replaced text is history: compacted away, it does not count against the document's limit.
          if (live.wouldExceedLimit(0)) live.compact();
        }
        result.updated.push(path);
      } else {
        const created = room.createFile(path, text);
        if (!created.ok) skip(created.message);
        else {
          fileCount++;
          result.created.push(path);
        }
      }
      continue;
    }
    if (!project) {
      skip(existing ? 'A binary file has this path; binary files need a folder project.' : 'Binary files need a folder project.');
      continue;
    }
    if (existing && !existing.binary) {
      skip('The workspace has this path as a text file; delete it first to replace it with a binary file.');
      continue;
    }
    const written = await project.writeBinary(path, item.bytes);
    if (!written.ok) skip(written.message);
    else if (existing) result.updated.push(path);
    else {
      fileCount++;
      result.created.push(path);
    }
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// Reading a zip. fflate's unzipSync inflates each entry into a buffer of its declared size and
// runs on however far the data really goes (a lying header: seconds of blocked event loop per
// few hundred KB), and checks no CRC. Here the central directory is read first, each entry is
// inflated by zlib (off the event loop) with its declared size as the output limit, and its
// length and CRC-32 are checked.

/** An entry of an uploaded zip: its bytes, or why they were not read. Directories are left out. */
export type ZipItem = { name: string; bytes: Uint8Array } | { name: string; skipped: string };

class ZipError extends Error {
  constructor(
    readonly status: 400 | 413,
    message: string,
  ) {
    super(message);
  }
}

const inflate = promisify(inflateRaw);
const malformed = (why: string) => new ZipError(400, `The upload is not a valid zip archive: ${why}. Zip the files again and retry.`);
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Reads every entry whole before anything is applied: a malformed archive imports nothing. */
export async function readZip(zip: Buffer, limits: { maxEntries: number; maxEntryBytes: number; maxUnpackedBytes: number }): Promise<ZipItem[]> {
  const within = (at: number, bytes: number) => at >= 0 && at + bytes <= zip.length;
  const u16 = (at: number) => (within(at, 2) ? zip.readUInt16LE(at) : fail());
  const u32 = (at: number) => (within(at, 4) ? zip.readUInt32LE(at) : fail());
  const u64 = (at: number) => (within(at, 8) ? Number(zip.readBigUInt64LE(at)) : fail());
  function fail(): never {
    throw malformed('it is cut short');
  }
  // The end record: 22 bytes and a comment of up to 64 KB, the last thing in the file.
  let end = -1;
  for (let at = zip.length - 22; at >= Math.max(0, zip.length - 22 - 0xffff); at--) {
    if (zip.readUInt32LE(at) === 0x06054b50 && at + 22 + zip.readUInt16LE(at + 20) === zip.length) {
      end = at;
      break;
    }
  }
  if (end === -1) throw malformed('it has no end of central directory record');
  if (u16(end + 4) !== 0 || u16(end + 6) !== 0) throw malformed('it is split across several files');
  let count = u16(end + 10);
  let directory = u32(end + 16);
  let directoryEnd = end;
  if (count === 0xffff || directory === 0xffffffff) {
    // Zip64: a locator just before the end record points at the 64-bit end record.
    if (u32(end - 20) !== 0x07064b50) throw malformed('its zip64 end record is missing');
    directoryEnd = u64(end - 12);
    if (u32(directoryEnd) !== 0x06064b50) throw malformed('its zip64 end record is missing');
    count = u64(directoryEnd + 32);
    directory = u64(directoryEnd + 48);
  }
  if (count > limits.maxEntries) throw new ZipError(413, `The zip holds ${count} entries; at most ${limits.maxEntries} are read.`);

  const items: ZipItem[] = [];
  let unpacked = 0;
  for (let at = directory, i = 0; i < count; i++) {
    if (at >= directoryEnd || u32(at) !== 0x02014b50) throw malformed('its central directory is damaged');
    const flags = u16(at + 8);
    const method = u16(at + 10);
    const crc = u32(at + 16);
    let packedSize = u32(at + 20);
    let size = u32(at + 24);
    const nameLength = u16(at + 28);
    const extraLength = u16(at + 30);
    let local = u32(at + 42);
    const nameBytes = zip.subarray(at + 46, at + 46 + nameLength);
    // Zip64 sizes: in extra field 1, only those whose 32-bit field is all ones, in this order.
    for (let x = at + 46 + nameLength; x + 4 <= at + 46 + nameLength + extraLength; x += 4 + u16(x + 2)) {
      if (u16(x) !== 1) continue;
      let field = x + 4;
      if (size === 0xffffffff) (size = u64(field)), (field += 8);
      if (packedSize === 0xffffffff) (packedSize = u64(field)), (field += 8);
      if (local === 0xffffffff) local = u64(field);
    }
    at += 46 + nameLength + extraLength + u16(at + 32);

    let name: string;
    try {
      name = utf8.decode(nameBytes);
    } catch {
      items.push({ name: nameBytes.toString('latin1'), skipped: 'Its name is not UTF-8; zip it with a tool that writes UTF-8 names.' });
      continue;
    }
    // A directory (the files in it make it), or the resource forks macOS's Finder adds to a zip.
    if (name.endsWith('/') || name.startsWith('__MACOSX/')) continue;
    if (flags & 1) {
      items.push({ name, skipped: 'It is encrypted.' });
      continue;
    }
    if (method !== 0 && method !== 8) {
      items.push({ name, skipped: `It is compressed with method ${method}; only stored and deflated entries are read.` });
      continue;
    }
    if (size > limits.maxEntryBytes) {
      items.push({ name, skipped: `It is larger than ${limits.maxEntryBytes / 1024 / 1024} MB, the most a file may hold.` });
      continue;
    }
    unpacked += size;
    if (unpacked > limits.maxUnpackedBytes) {
      throw new ZipError(413, `The zip unpacks to more than ${limits.maxUnpackedBytes / 1024 / 1024} MB: upload it in parts (a folder at a time, with ?path=<folder>).`);
    }
    if (u32(local) !== 0x04034b50) throw malformed(`the entry "${name}" is not where its directory says`);
    const start = local + 30 + u16(local + 26) + u16(local + 28);
    if (start + packedSize > directory) throw malformed(`the entry "${name}" runs past the end of the data`);
    const packed = zip.subarray(start, start + packedSize);
    let bytes: Uint8Array;
    if (method === 0) bytes = packed;
    else {
      try {
        bytes = await inflate(packed, { maxOutputLength: Math.max(size, 1) });
      } catch (error) {
        const tooBig = (error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE';
        throw malformed(tooBig ? `the entry "${name}" unpacks to more than the ${size} bytes its header says` : `the entry "${name}" has damaged compressed data`);
      }
    }
    if (bytes.byteLength !== size || crc32(bytes) !== crc) throw malformed(`the entry "${name}" does not match its checksum`);
    items.push({ name, bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) });
  }
  return items;
}
