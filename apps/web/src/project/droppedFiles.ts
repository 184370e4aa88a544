import { zipSync, type Zippable } from 'fflate';

/**
 * The parts of the File and Directory Entries API (`DataTransferItem.webkitGetAsEntry()`) a drop
 * is read through; the browser's FileSystemEntry objects have this shape, and tests pass plain
 * objects.
 */
export interface DroppedEntry {
  readonly name: string;
  readonly isFile: boolean;
  readonly isDirectory: boolean;
}
export interface DroppedFileEntry extends DroppedEntry {
  file(success: (file: File) => void, failure?: (error: DOMException) => void): void;
}
export interface DroppedDirectoryEntry extends DroppedEntry {
  createReader(): { readEntries(success: (entries: DroppedEntry[]) => void, failure?: (error: DOMException) => void): void };
}

/** What a drop holds: the files by path (relative to where they were dropped), and what was left out. */
export interface CollectedFiles {
  files: Map<string, Blob>;
  /** Paths not read: version control and dependency folders, OS litter ("node_modules/", ".DS_Store"), a top-level "__proto__". */
  leftOut: string[];
}

/** Folders nobody means to upload into an editor: huge, and rebuilt by tools. */
const skippedFolders: ReadonlySet<string> = new Set(['.git', 'node_modules', '.hg', '.svn']);
const skippedFiles: ReadonlySet<string> = new Set(['.DS_Store', 'Thumbs.db', 'desktop.ini']);

/** fflate gathers a zip's entries in a plain object: a top-level "__proto__" cannot be one of them. */
const leftOutFile = (path: string) => skippedFiles.has(path.slice(path.lastIndexOf('/') + 1)) || path === '__proto__';

const isFileEntry = (entry: DroppedEntry): entry is DroppedFileEntry => entry.isFile;
const isDirectoryEntry = (entry: DroppedEntry): entry is DroppedDirectoryEntry => entry.isDirectory;

function readFile(entry: DroppedFileEntry): Promise<File> {
  return new Promise((resolve, reject) => entry.file(resolve, reject));
}

/** Every entry of a directory: readEntries answers in batches (100 in Chrome) until an empty one. */
async function readDirectory(entry: DroppedDirectoryEntry): Promise<DroppedEntry[]> {
  const reader = entry.createReader();
  const all: DroppedEntry[] = [];
  for (;;) {
    const batch = await new Promise<DroppedEntry[]>((resolve, reject) => reader.readEntries(resolve, reject));
    if (batch.length === 0) return all;
    all.push(...batch);
  }
}

/**
 * Reads dropped files and folders (folders recursively) into one map of paths: a dropped folder
 * "site" gives "site/index.html", "site/img/logo.png"; a dropped file gives its name.
 */
export async function collectDroppedFiles(roots: readonly DroppedEntry[]): Promise<CollectedFiles> {
  const files = new Map<string, Blob>();
  const leftOut: string[] = [];
  const visit = async (entry: DroppedEntry, path: string): Promise<void> => {
    if (isDirectoryEntry(entry)) {
      if (skippedFolders.has(entry.name)) {
        leftOut.push(`${path}/`);
        return;
      }
      for (const child of await readDirectory(entry)) await visit(child, `${path}/${child.name}`);
    } else if (isFileEntry(entry)) {
      if (leftOutFile(path)) leftOut.push(path);
      else files.set(path, await readFile(entry));
    }
  };
  for (const root of roots) await visit(root, root.name);
  return { files, leftOut };
}

/** Files picked in a file input: flat, by name. */
export function collectPickedFiles(picked: Iterable<File>): CollectedFiles {
  const files = new Map<string, Blob>();
  const leftOut: string[] = [];
  for (const file of picked) {
    if (leftOutFile(file.name)) leftOut.push(file.name);
    else files.set(file.name, file);
  }
  return { files, leftOut };
}

export function totalBytes(files: ReadonlyMap<string, Blob>): number {
  let total = 0;
  for (const blob of files.values()) total += blob.size;
  return total;
}

/** A lone .zip is an archive to unpack, sent as it is; anything else is zipped here. */
export function isLoneZip(files: ReadonlyMap<string, Blob>): boolean {
  if (files.size !== 1) return false;
  const [path] = files.keys();
  return path !== undefined && !path.includes('/') && path.toLowerCase().endsWith('.zip');
}

/** Formats whose bytes are compressed already: deflating them again costs time and saves nothing. */
const compressed = /\.(?:zip|gz|tgz|bz2|xz|7z|rar|zst|png|jpe?g|gif|webp|avif|ico|woff2?|mp3|mp4|m4a|webm|ogg|pdf|jar|wasm)$/i;

/** The zip of a map of files; compressed formats are stored as they are. */
export function zipFiles(files: ReadonlyMap<string, Uint8Array>): Uint8Array<ArrayBuffer> {
  // No prototype, so a path is never taken for one of Object's own properties.
  const zippable = Object.create(null) as Zippable;
  for (const [path, bytes] of files) zippable[path] = compressed.test(path) ? [bytes, { level: 0 }] : bytes;
  return zipSync(zippable, { level: 6 });
}

/** The body an upload sends: a lone dropped .zip as it is, else the files zipped. */
export async function uploadBody(files: ReadonlyMap<string, Blob>): Promise<Uint8Array<ArrayBuffer>> {
  if (isLoneZip(files)) {
    const [zip] = files.values();
    return new Uint8Array(await zip!.arrayBuffer());
  }
  const bytes = new Map<string, Uint8Array>();
  for (const [path, blob] of files) bytes.set(path, new Uint8Array(await blob.arrayBuffer()));
  return zipFiles(bytes);
}

/** Whether a drag carries files from outside the page (the desktop), not a row of the tree. */
export function isFileDrag(dataTransfer: DataTransfer): boolean {
  return dataTransfer.types.includes('Files');
}

/**
 * The dropped items as entries, folders included. Call it inside the drop event: the browser
 * empties the DataTransfer once the handler returns. Without webkitGetAsEntry, plain files.
 */
export function droppedRoots(dataTransfer: DataTransfer): DroppedEntry[] {
  const roots: DroppedEntry[] = [];
  for (let i = 0; i < dataTransfer.items.length; i++) {
    const item = dataTransfer.items[i];
    if (item?.kind !== 'file') continue;
    const entry = typeof item.webkitGetAsEntry === 'function' ? item.webkitGetAsEntry() : null;
    const file = entry ? null : item.getAsFile();
    if (entry) roots.push(entry);
    else if (file) roots.push(fileAsEntry(file));
  }
  return roots;
}

function fileAsEntry(file: File): DroppedFileEntry {
  return { name: file.name, isFile: true, isDirectory: false, file: (success) => success(file) };
}
