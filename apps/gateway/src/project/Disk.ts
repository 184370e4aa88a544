import watcher from '@parcel/watcher';
import ignore, { type Ignore } from 'ignore';
import { createHash, randomBytes } from 'node:crypto';
import { chmod, lstat, mkdir, open, readdir, readFile, realpath, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';

export type DiskEventType = 'create' | 'update' | 'delete';
export interface DiskEvent {
  type: DiskEventType;
  /** Relative to the folder, with forward slashes. */
  path: string;
}

/**
 * The folder a project syncs with, by relative paths, all confined to it. The port FolderSync
 * talks to: the real one is `NodeDisk`; tests may give a disk of their own.
 */
export interface Disk {
  /** Every file that is not ignored, with its size; only those in folder `under` when given (none if it is no folder). */
  list(under?: string): Promise<Array<{ path: string; size: number }>>;
  /** A file's bytes and mode; null when there is none (or it is not a regular file inside the folder). */
  read(path: string): Promise<{ bytes: Uint8Array; mode: number } | null>;
  /**
   * Writes a file atomically (a temporary file renamed over it), creating its folders; keeps
   * `mode`. With `expected` (a `contentDigest`, or null for "no file there") the file is replaced
   * only if it still holds that, checked just before the rename; false when it did not (someone
   * else wrote it since: their change is merged first, not overwritten).
   */
  write(path: string, bytes: Uint8Array, mode?: number, expected?: string | null): Promise<boolean>;
  remove(path: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  /** Reports changes made to the folder (by anything, this process included), batched. */
  watch(onEvents: (events: DiskEvent[]) => void): Promise<() => Promise<void>>;
  ignored(path: string): boolean;
}

/** Never synced, whatever .gitignore says: version control, dependencies, build output, our data. */
export const defaultIgnores = ['.git', 'node_modules', 'dist', 'build', 'out', 'coverage', '.next', '.turbo', '.cache', 'target', '.flint-data', '.DS_Store'];

const posix = (path: string) => path.split(sep).join('/');
/**
 * Git's own folder is never written, renamed or deleted through a workspace, whatever the tree
 * says: a hook or a config there (core.fsmonitor, core.sshCommand) runs commands on this machine
 * the next time anyone uses git in the folder.
 */
export const inGitFolder = (path: string) => path.split('/').some((segment) => segment.toLowerCase() === '.git');
/** What a file holds, for `Disk.write`'s check: the sha256 of its bytes. */
export const contentDigest = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** Our own temporary files (a write in progress): never read as a file of the project. */
const temporary = /(^|\/)\.[^/]*\.flint-[0-9a-f]{8}\.tmp$/;

/** A real folder: node:fs, @parcel/watcher, write-file-atomic, `.gitignore` rules through `ignore`. */
export class NodeDisk implements Disk {
  /** .gitignore rules by the folder they sit in ('' = the root). */
  private readonly rules = new Map<string, Ignore>();

  private constructor(readonly root: string) {}

  static async open(folder: string): Promise<NodeDisk> {
    const root = await realpath(resolve(folder));
    if (!(await stat(root)).isDirectory()) throw new Error(`${folder} is not a folder.`);
    const disk = new NodeDisk(root);
    await disk.loadRules('');
    return disk;
  }

  private async loadRules(folder: string): Promise<void> {
    const rules = ignore();
    if (folder === '') rules.add(defaultIgnores);
    try {
      rules.add(await readFile(join(this.root, folder, '.gitignore'), 'utf8'));
    } catch {
      if (folder !== '') return;
    }
    this.rules.set(folder, rules);
  }

  ignored(path: string): boolean {
    if (temporary.test(path)) return true;
    const parts = path.split('/');
    for (let depth = 0; depth < parts.length; depth++) {
      const folder = parts.slice(0, depth).join('/');
      const rules = this.rules.get(folder);
      if (!rules) continue;
      const rest = parts.slice(depth).join('/');
      if (rest && rules.ignores(rest)) return true;
    }
    return false;
  }

  /** The absolute path of a relative one, or null when it would leave the folder (or enter .git). */
  private inside(path: string): string | null {
    if (inGitFolder(path)) return null;
    const absolute = resolve(this.root, path);
    return absolute.startsWith(this.root + sep) ? absolute : null;
  }

  /** Like `inside`, and every link on the way resolves inside the folder too. */
  private async realInside(path: string): Promise<string | null> {
    const absolute = this.inside(path);
    if (!absolute) return null;
    try {
      const real = await realpath(absolute);
      return real.startsWith(this.root + sep) ? real : null;
    } catch {
      return null;
    }
  }

  async list(under?: string): Promise<Array<{ path: string; size: number }>> {
    const files: Array<{ path: string; size: number }> = [];
    const walk = async (folder: string): Promise<void> => {
      if (folder !== '') await this.loadRules(folder);
      const entries = await readdir(join(this.root, folder), { withFileTypes: true }).catch((error: unknown) => {
        if (folder === under) return []; // not a folder (any more)
        throw error;
      });
      for (const entry of entries) {
        const path = folder ? `${folder}/${entry.name}` : entry.name;
        if (this.ignored(entry.isDirectory() ? `${path}/` : path) || this.ignored(path)) continue;
        // Links are not followed into folders; a linked file is read only if it stays inside.
        if (entry.isDirectory()) await walk(path);
        else if (entry.isFile() || (entry.isSymbolicLink() && (await this.realInside(path)) !== null)) {
          const info = await stat(join(this.root, path)).catch(() => null);
          if (info?.isFile()) files.push({ path, size: info.size });
        }
      }
    };
    if (under === undefined) await walk('');
    else if (this.inside(under) && !this.ignored(`${under}/`) && !this.ignored(under) && (await lstat(join(this.root, under)).catch(() => null))?.isDirectory()) await walk(under);
    return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  async read(path: string): Promise<{ bytes: Uint8Array; mode: number } | null> {
    const real = await this.realInside(path);
    if (!real) return null;
    try {
      const info = await stat(real);
      if (!info.isFile()) return null;
      return { bytes: new Uint8Array(await readFile(real)), mode: info.mode & 0o777 };
    } catch {
      return null;
    }
  }

  async write(path: string, bytes: Uint8Array, mode?: number, expected?: string | null): Promise<boolean> {
    const absolute = this.inside(path);
    if (!absolute) throw new Error(`"${path}" is outside the folder.`);
    await mkdir(dirname(absolute), { recursive: true });
    // Atomic: a temporary file beside it, synced, then renamed over it (a link is replaced,
    // never written through: it could point outside the folder). Hand-written rather than
    // write-file-atomic because the watcher must know the temporary file's name to skip it.
    const temp = join(dirname(absolute), `.${basename(absolute)}.flint-${randomBytes(4).toString('hex')}.tmp`);
    const file = await open(temp, 'w', mode ?? 0o644);
    try {
      await file.writeFile(bytes);
      await file.sync();
    } finally {
      await file.close();
    }
    if (mode !== undefined) await chmod(temp, mode);
    if (expected !== undefined && (await currentDigest(absolute)) !== expected) {
      await rm(temp, { force: true });
      return false;
    }
    await rename(temp, absolute).catch(async (error: unknown) => {
      await rm(temp, { force: true });
      throw error;
    });
    return true;
  }

  async remove(path: string): Promise<void> {
    const absolute = this.inside(path);
    if (!absolute) return;
    await rm(absolute, { force: true });
  }

  async rename(from: string, to: string): Promise<void> {
    const source = this.inside(from);
    const target = this.inside(to);
    if (!source || !target) throw new Error('A rename must stay inside the folder.');
    if (!(await lstat(source).catch(() => null))) return;
    await mkdir(dirname(target), { recursive: true });
    await rename(source, target);
  }

  async watch(onEvents: (events: DiskEvent[]) => void): Promise<() => Promise<void>> {
    const subscription = await watcher.subscribe(
      this.root,
      (error, events) => {
        if (error) return;
        const relevant: DiskEvent[] = [];
        for (const event of events) {
          const path = posix(relative(this.root, event.path));
          if (!path || path.startsWith('..') || this.ignored(path)) continue;
          if (path.endsWith('.gitignore')) void this.loadRules(path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '');
          relevant.push({ type: event.type, path });
        }
        if (relevant.length) onEvents(relevant);
      },
      { ignore: defaultIgnores.map((name) => `**/${name}`) },
    );
    return () => subscription.unsubscribe();
  }
}

/** The digest of what a file holds now; null when there is none. */
async function currentDigest(absolute: string): Promise<string | null> {
  try {
    return contentDigest(await readFile(absolute));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}
