import { createHash, randomBytes } from 'node:crypto';
import { constants, existsSync } from 'node:fs';
import { lstat, mkdir, open, readFile, realpath, rename, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

/** Why a change to the folder was refused at its edge. */
export type FolderEdgeReason = 'link' | 'not_a_folder' | 'not_a_file' | 'outside' | 'ignored';

/** A write, rename or delete the folder's edge refused; `message` is for people. */
export class FolderEdgeError extends Error {
  constructor(
    readonly reason: FolderEdgeReason,
    message: string,
  ) {
    super(message);
    this.name = 'FolderEdgeError';
  }
}

/** Called once the folders a change goes through are held, just before the change itself (tests race it). */
export type BeforeChange = (path: string) => Promise<void> | void;

const heldFolders = existsSync('/proc/self/fd');

/** What people are told when a path goes through a link. */
export const throughLink = (path: string) => `"${path}" is a link on disk; Flint does not write, rename or delete through links (one could lead outside the folder).`;
const linkRefused = (path: string) => new FolderEdgeError('link', throughLink(path));

/** The relative path's names, refusing any that would climb or stand still. */
function namesOf(path: string): string[] {
  const names = path.split('/');
  if (names.some((name) => name === '' || name === '.' || name === '..' || name.includes('\0'))) {
    throw new FolderEdgeError('outside', `"${path}" is outside the folder.`);
  }
  return names;
}

const code = (error: unknown) => (error as NodeJS.ErrnoException).code;

/**
 * Changes a folder by relative paths without ever leaving it, links and races included (DESIGN
 * §11.3). The check and the use cannot drift apart: on Linux each folder on the way is opened
 * with O_NOFOLLOW relative to the one before it (through `/proc/self/fd/N`, node's stand-in for
 * openat), and the change is made relative to the last one held, so a link swapped in after the
 * walk changes nothing: the held folder is the one that was checked. A link anywhere on the way,
 * or at the target, is refused, never followed and never replaced. Elsewhere (macOS) the same
 * walk runs by path with lstat, and the folder's real path is checked again after the temporary
 * file is open: narrower than held folders, not closed.
 */
export class ConfinedFolder {
  constructor(
    readonly root: string,
    private readonly beforeChange: BeforeChange = () => {},
  ) {}

  /** Writes a file atomically (a temporary file beside it, synced, renamed over it), creating its folders. */
  /**
   * Writes a file atomically (a temporary file beside it, synced, renamed over it), creating its
   * folders. With `expected` (a `contentDigest`, or null for "no file there") the file is replaced
   * only if it still holds that, checked just before the rename: false, and nothing written, when
   * something else changed it since (the caller merges that change first).
   */
  async write(path: string, bytes: Uint8Array, mode?: number, expected?: string | null): Promise<boolean> {
    const names = namesOf(path);
    const name = names.pop()!;
    let written = true;
    await this.within(names, true, async (at) => {
      // A file written without a mode keeps the one it has (an upload over an executable script).
      const kept = await this.existingMode(at(name), path);
      if (mode === undefined && kept !== null) mode = kept;
      // Named so that the watcher can tell it is ours and skip it (0023).
      const temp = `.${name}.flint-${randomBytes(4).toString('hex')}.tmp`;
      const file = await open(at(temp), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode ?? 0o644);
      try {
        await file.writeFile(bytes);
        if (mode !== undefined) await file.chmod(mode);
        await file.sync();
      } finally {
        await file.close();
      }
      try {
        await this.recheck(names, at);
        await this.beforeChange(path);
        if (expected !== undefined && (await digestOf(at(name))) !== expected) {
          written = false;
          await unlink(at(temp));
          return;
        }
        await rename(at(temp), at(name));
      } catch (error) {
        await unlink(at(temp)).catch(() => {}); // the temporary file is ours; the error below says what failed
        throw error;
      }
    });
    return written;
  }

  /** Deletes a file; nothing when it is already gone. */
  async remove(path: string): Promise<void> {
    const names = namesOf(path);
    const name = names.pop()!;
    await this.within(names, false, async (at) => {
      if (!(await this.existingFile(at(name), path))) return;
      await this.beforeChange(path);
      await unlink(at(name)).catch((error: unknown) => {
        if (code(error) !== 'ENOENT') throw error;
      });
    });
  }

  /** Moves a file, creating the target's folders; nothing when the source is gone. */
  async rename(from: string, to: string): Promise<void> {
    const fromNames = namesOf(from);
    const fromName = fromNames.pop()!;
    const toNames = namesOf(to);
    const toName = toNames.pop()!;
    await this.within(fromNames, false, async (source) => {
      if (!(await this.existingFile(source(fromName), from))) return;
      await this.within(toNames, true, async (target) => {
        await this.existingFile(target(toName), to);
        await this.beforeChange(to);
        await rename(source(fromName), target(toName));
      });
    });
  }

  /** Whether a file is at `at`; a link or a folder there is refused, never written through or replaced. */
  private async existingFile(at: string, path: string): Promise<boolean> {
    return (await this.existingMode(at, path)) !== null;
  }

  /** The permission bits of the file there, null when there is none; a link or folder is refused. */
  private async existingMode(at: string, path: string): Promise<number | null> {
    const info = await lstat(at).catch((error: unknown) => {
      if (code(error) === 'ENOENT') return null;
      throw error;
    });
    if (!info) return null;
    if (info.isSymbolicLink()) throw linkRefused(path);
    if (!info.isFile()) throw new FolderEdgeError('not_a_file', `"${path}" is not a file on disk.`);
    return info.mode & 0o7777;
  }

  /**
   * Runs `use` with a function naming entries of the folder `names` leads to, held for the
   * duration; missing folders are created when `create`, else `use` does not run.
   */
  private async within(names: string[], create: boolean, use: (at: (name: string) => string) => Promise<void>): Promise<void> {
    if (!heldFolders) return this.withinByPath(names, create, use);
    let folder: FileHandle = await open(this.root, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
    try {
      for (let depth = 0; depth < names.length; depth++) {
        const at = `/proc/self/fd/${folder.fd}/${names[depth]}`;
        const openFolder = () => open(at, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
        let next: FileHandle;
        try {
          // Made only when missing: most writes go to folders that exist.
          next = await openFolder().catch(async (error: unknown) => {
            if (code(error) !== 'ENOENT' || !create) throw error;
            await mkdir(at).catch((made: unknown) => {
              if (code(made) !== 'EEXIST') throw made;
            });
            return openFolder();
          });
        } catch (error) {
          const shown = names.slice(0, depth + 1).join('/');
          if (code(error) === 'ENOENT' && !create) return;
          if (code(error) === 'ELOOP') throw linkRefused(shown);
          if (code(error) === 'ENOTDIR') throw new FolderEdgeError('not_a_folder', `"${shown}" is a file on disk, not a folder.`);
          throw error;
        }
        await folder.close();
        folder = next;
      }
      const fd = folder.fd;
      await use((name) => `/proc/self/fd/${fd}/${name}`);
    } finally {
      await folder.close();
    }
  }

  private async withinByPath(names: string[], create: boolean, use: (at: (name: string) => string) => Promise<void>): Promise<void> {
    let folder = this.root;
    for (let depth = 0; depth < names.length; depth++) {
      folder = join(folder, names[depth]!);
      if (create) {
        await mkdir(folder).catch((error: unknown) => {
          if (code(error) !== 'EEXIST') throw error;
        });
      }
      const info = await lstat(folder).catch(() => null);
      const shown = names.slice(0, depth + 1).join('/');
      if (!info) return;
      if (info.isSymbolicLink()) throw linkRefused(shown);
      if (!info.isDirectory()) throw new FolderEdgeError('not_a_folder', `"${shown}" is a file on disk, not a folder.`);
    }
    await use((name) => join(folder, name));
  }

  /** Without held folders: the folder is still where the walk found it (a link swapped in since is refused). */
  private async recheck(names: string[], at: (name: string) => string): Promise<void> {
    if (heldFolders) return;
    if ((await realpath(at('.'))) !== join(this.root, ...names)) throw linkRefused(names.join('/'));
  }
}

/** The sha256 of what a file holds now (`contentDigest`); null when there is none. */
async function digestOf(at: string): Promise<string | null> {
  try {
    return createHash('sha256').update(await readFile(at)).digest('hex');
  } catch (error) {
    if (code(error) === 'ENOENT') return null;
    throw error;
  }
}
