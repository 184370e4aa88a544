import type { Readable } from 'node:stream';
import * as zlib from 'node:zlib';
import { fromBufferPromise, type Entry, type ZipFile } from 'yauzl';

/**
 * Reading an uploaded zip (issue 24) with yauzl. Each entry streams through zlib with its declared
 * size enforced (`validateEntrySizes`), so a header that understates an entry is refused at the
 * first chunk past it, and no entry holds the event loop while it inflates.
 */

/** An entry of an uploaded zip: its bytes, or why they were not read. Directories are left out. */
export type ZipUploadEntry = { path: string; bytes: Uint8Array } | { path: string; skipped: string };

/** Every entry, or why the upload is refused whole: over a limit (`too-large`), or not a valid zip (`damaged`). */
export type ZipUpload = { ok: true; entries: ZipUploadEntry[] } | { ok: false; reason: 'damaged' | 'too-large'; message: string };

export interface ZipUploadLimits {
  maxEntries: number;
  maxEntryBytes: number;
  maxUnpackedBytes: number;
}

// yauzl checks no CRC-32, and a stored entry has nothing else guarding its bytes. zlib.crc32 came
// in Node 20.15: on an older Node 20 only the sizes and inflate's own checks guard an entry.
const crc32 = (zlib as Partial<typeof zlib>).crc32;
const utf8 = new TextDecoder('utf-8', { fatal: true });

const damaged = (why: string): ZipUpload => ({ ok: false, reason: 'damaged', message: `The upload is not a valid zip archive: ${why}. Zip the files again and retry.` });
const tooLarge = (message: string): ZipUpload => ({ ok: false, reason: 'too-large', message });
const reasonOf = (error: unknown) => String(error instanceof Error ? error.message : error).replace(/\.$/, '');

/**
 * What an upload's entries declare, before any is inflated: the caller refuses here (a message)
 * when they would not fit (the workspace's storage quota), so a refusal comes before memory grows.
 */
export type AdmitUpload = (declared: ReadonlyArray<{ path: string; bytes: number }>, totalBytes: number) => string | null;

/**
 * Reads every entry whole before anything is applied, so a damaged archive imports nothing.
 * The central directory is read first: the declared sizes are checked (per entry, in all, and
 * by `admit`) before a byte is inflated, and inflating holds each entry to its declared size.
 * Names are decoded here, not by yauzl: it would read a UTF-8 name without the UTF-8 flag as
 * CP437, and refuse the whole archive for one `../` name that the caller skips on its own.
 */
export async function readZipUpload(zip: Buffer, limits: ZipUploadLimits, admit: AdmitUpload = () => null): Promise<ZipUpload> {
  let archive: ZipFile;
  try {
    archive = await fromBufferPromise(zip, { lazyEntries: true, validateEntrySizes: true, decodeStrings: false });
  } catch (error) {
    return damaged(`it cannot be opened (${reasonOf(error)})`);
  }
  try {
    return await readEntries(archive, limits, admit);
  } finally {
    archive.close();
  }
}

type Planned = ZipUploadEntry | { path: string; entry: Entry };

async function readEntries(archive: ZipFile, limits: ZipUploadLimits, admit: AdmitUpload): Promise<ZipUpload> {
  if (archive.entryCount > limits.maxEntries) return tooLarge(`The zip holds ${archive.entryCount} entries; at most ${limits.maxEntries} are read.`);
  const planned = await plan(archive, limits);
  if (!Array.isArray(planned)) return planned;
  const declared = planned.flatMap((item) => ('entry' in item ? [{ path: item.path, bytes: item.entry.uncompressedSize }] : []));
  const unpackedBytes = declared.reduce((sum, item) => sum + item.bytes, 0);
  if (unpackedBytes > limits.maxUnpackedBytes) {
    return tooLarge(`The zip unpacks to ${megabytes(unpackedBytes)}, more than the ${megabytes(limits.maxUnpackedBytes)} one upload may hold: upload it in parts (a folder at a time, with ?path=<folder>).`);
  }
  const refused = admit(declared, unpackedBytes);
  if (refused !== null) return tooLarge(refused);
  const entries: ZipUploadEntry[] = [];
  for (const item of planned) {
    if (!('entry' in item)) {
      entries.push(item);
      continue;
    }
    const bytes = await readEntry(archive, item.entry, limits.maxEntryBytes);
    if (typeof bytes === 'string') return damaged(`the entry "${item.path}" ${bytes}`);
    entries.push({ path: item.path, bytes });
  }
  return { ok: true, entries };
}

/** The central directory: which entries will be read (with their declared sizes) and which are skipped, why. */
async function plan(archive: ZipFile, limits: ZipUploadLimits): Promise<Planned[] | ZipUpload> {
  const planned: Planned[] = [];
  const directory = archive.eachEntry();
  for (;;) {
    let next: IteratorResult<Entry>;
    try {
      next = await directory.next();
    } catch (error) {
      return damaged(`its central directory cannot be read (${reasonOf(error)})`);
    }
    if (next.done) return planned;
    const entry = next.value;
    const path = nameOf(entry.fileNameRaw);
    const skip = (why: string) => planned.push({ path: path ?? entry.fileNameRaw.toString('latin1'), skipped: why });
    if (path === null) {
      skip('Its name is not UTF-8; zip it with a tool that writes UTF-8 names.');
      continue;
    }
    // A directory (the files in it make it), or the resource forks macOS's Finder adds to a zip.
    if (path.endsWith('/') || path.startsWith('__MACOSX/')) continue;
    if (entry.isEncrypted()) {
      skip('It is encrypted.');
      continue;
    }
    if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
      skip(`It is compressed with method ${entry.compressionMethod}; only stored and deflated entries are read.`);
      continue;
    }
    if (entry.uncompressedSize > limits.maxEntryBytes) {
      skip(`It is larger than ${limits.maxEntryBytes / 1024 / 1024} MB, the most a file may hold.`);
      continue;
    }
    planned.push({ path, entry });
  }
}

/** Bytes as megabytes for a sentence: "252.3 MB". */
export function megabytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1).replace(/\.0$/, '')} MB`;
}

function nameOf(raw: Buffer): string | null {
  try {
    return utf8.decode(raw);
  } catch {
    return null; // not UTF-8: the entry is skipped with its reason
  }
}

/** The entry's bytes, or what is wrong with them. */
async function readEntry(archive: ZipFile, entry: Entry, maxBytes: number): Promise<Uint8Array | string> {
  let stream: Readable;
  try {
    stream = await archive.openReadStreamPromise(entry);
  } catch (error) {
    return `cannot be read (${reasonOf(error)})`;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let crc = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      size += chunk.byteLength;
      // validateEntrySizes already stops at the declared size, itself within the limit; this holds
      // the limit on its own. Leaving the loop destroys the stream.
      if (size > maxBytes) return `unpacks to more than ${maxBytes} bytes`;
      chunks.push(chunk);
      if (crc32) crc = crc32(chunk, crc);
    }
  } catch (error) {
    // zlib's errors carry a Z_ code; yauzl's validateEntrySizes errors carry none: the data
    // inflates to more, or fewer, bytes than the entry declares.
    const { code } = error as { code?: unknown };
    return typeof code === 'string' && code.startsWith('Z_') ? 'has damaged compressed data' : `does not unpack to the ${entry.uncompressedSize} bytes its header says`;
  }
  if (crc32 && crc !== entry.crc32) return 'does not match its checksum';
  const bytes = Buffer.concat(chunks, size);
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
