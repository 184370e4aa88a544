import { normalizePath } from '@flint/protocol';

/**
 * How the disk spells the paths of a workspace (files and folders) where that is not NFC. macOS
 * writes names decomposed (NFD); the workspace shows them composed, and reads and writes must go
 * to the disk's own spelling, or an edit makes a second file beside the first (issue 32).
 */
export class DiskSpelling {
  private readonly spelling = new Map<string, string>();

  /** Notes how the disk spells a path it reported, and returns the workspace's spelling (NFC). */
  note(onDisk: string): string {
    const path = normalizePath(onDisk);
    if (path === onDisk) return path;
    const disk = onDisk.split('/');
    const tree = path.split('/');
    if (disk.length !== tree.length) return path;
    for (let depth = 1; depth <= disk.length; depth++) {
      if (disk[depth - 1] !== tree[depth - 1]) this.spelling.set(tree.slice(0, depth).join('/'), disk.slice(0, depth).join('/'));
    }
    return path;
  }

  /** Where a workspace path is on disk: its own spelling there, or its nearest folder's. */
  onDisk(path: string): string {
    if (this.spelling.size === 0) return path;
    const exact = this.spelling.get(path);
    if (exact !== undefined) return exact;
    for (let end = path.lastIndexOf('/'); end > 0; end = path.lastIndexOf('/', end - 1)) {
      const folder = this.spelling.get(path.slice(0, end));
      if (folder !== undefined) return folder + path.slice(end);
    }
    return path;
  }

  /** The file at `path` is gone or moved (its folders' spellings stay: others may be in them). */
  forget(path: string): void {
    this.spelling.delete(path);
  }
}
