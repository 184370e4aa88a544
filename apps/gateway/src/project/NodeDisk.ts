import { isWithin } from '@flint/protocol';
import watcher from '@parcel/watcher';
import ignore, { type Ignore } from 'ignore';
import { createHash } from 'node:crypto';
import { lstatSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { lstat, readdir, readFile, realpath, stat } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import type { Disk, DiskEvent } from '../core/ports/Disk';
import { ConfinedFolder, FolderEdgeError, throughLink, type BeforeChange } from './ConfinedFolder';

/** What ext4, APFS and NTFS allow in one name, in bytes (UTF-8). */
const maxNameBytes = 255;

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

/**
 * One folder's `.gitignore` rules. What the owner's disk says (`owner`) decides; what the
 * workspace itself wrote into that .gitignore (an editor's or the agent's typing, `typed`) may
 * hide more at once but never shows more: a path is ignored when either ignores it (0025).
 */
interface FolderRules {
  owner: Ignore | null;
  typed: Ignore | null;
  /**
   * What this process last made of the file (its text, or null when it deleted it): finding the
   * disk so is our own change coming back, not the owner's.
   */
  ours: { text: string | null } | null;
  /** inode, size and mtime of the .gitignore when last read ('' when there was none). */
  stamp: string;
}

export interface NodeDiskOptions {
  /** Folders never written, whatever the workspace says (the gateway's own data directory). */
  excluded?: string[];
  /** For tests: runs between the folders being held and a change being made. */
  beforeChange?: BeforeChange;
}

/** A real folder: node:fs, @parcel/watcher, `.gitignore` rules through `ignore`; changes through ConfinedFolder. */
export class NodeDisk implements Disk {
  /** .gitignore rules by the folder they sit in ('' = the root). */
  private readonly rules = new Map<string, FolderRules>();
  private readonly folder: ConfinedFolder;

  private constructor(
    readonly root: string,
    /** Relative paths inside the folder that are the gateway's own (its data directory). */
    private readonly excluded: string[],
    beforeChange?: BeforeChange,
  ) {
    this.folder = new ConfinedFolder(root, beforeChange);
  }

  static async open(folder: string, options: NodeDiskOptions = {}): Promise<NodeDisk> {
    const root = await realpath(resolve(folder));
    if (!(await stat(root)).isDirectory()) throw new Error(`${folder} is not a folder.`);
    const excluded: string[] = [];
    for (const path of options.excluded ?? []) {
      const real = await realpath(resolve(path)).catch(() => resolve(path));
      if (real === root || root.startsWith(real + sep)) throw new Error(`${folder} is inside the gateway's data directory (${real}); open another folder or set FLINT_DATA_DIR elsewhere`);
      if (real.startsWith(root + sep)) excluded.push(relative(root, real).split(sep).join('/'));
    }
    const disk = new NodeDisk(root, excluded, options.beforeChange);
    await disk.refreshRules('');
    return disk;
  }

  /**
   * Reads a folder's .gitignore again if it changed on disk since it was last read. The disk is asked each time a decision is made (a watcher batch, a
   * write), so what a workspace shows follows the files as they are, not the order events came.
   */
  private async refreshRules(folder: string): Promise<void> {
    const file = join(this.root, folder, '.gitignore');
    const info = await stat(file).catch(() => null);
    const stamp = info?.isFile() ? `${info.ino}:${info.size}:${info.mtimeMs}` : '';
    const known = this.rules.get(folder);
    if (known && known.stamp === stamp) return;
    const text = stamp ? await readFile(file, 'utf8').catch(() => null) : null;
    const rules: FolderRules = known ?? { owner: null, typed: null, ours: null, stamp };
    rules.stamp = stamp;
    if (rules.ours && rules.ours.text === text) rules.typed = text === null ? null : ignore().add(text);
    else {
      const owner = folder === '' ? ignore().add(defaultIgnores) : null;
      rules.owner = text === null ? owner : (owner ?? ignore()).add(text);
      rules.typed = null;
      rules.ours = null;
    }
    this.rules.set(folder, rules);
  }

  /** The rules of every folder above `paths` (the root included), each read again if it changed. */
  private async refreshAbove(paths: Iterable<string>): Promise<void> {
    const folders = new Set<string>(['']);
    for (const path of paths) {
      const parts = path.split('/');
      for (let depth = 1; depth < parts.length; depth++) folders.add(parts.slice(0, depth).join('/'));
    }
    await Promise.all([...folders].map((folder) => this.refreshRules(folder)));
  }

  ignored(path: string): boolean {
    if (temporary.test(path)) return true;
    if (this.excluded.some((folder) => isWithin(path, folder))) return true;
    const parts = path.split('/');
    for (let depth = 0; depth < parts.length; depth++) {
      const folder = parts.slice(0, depth).join('/');
      const rules = this.rules.get(folder);
      if (!rules) continue;
      const rest = parts.slice(depth).join('/');
      if (rest && (rules.owner?.ignores(rest) || rules.typed?.ignores(rest))) return true;
    }
    return false;
  }

  outsideWorkspace(path: string): string | null {
    const why = this.outsideByRules(path);
    if (why) return why;
    // Said at once, for a clear answer; ConfinedFolder refuses it again when the change is made.
    const parts = path.split('/');
    for (let depth = 1; depth <= parts.length; depth++) {
      const shown = parts.slice(0, depth).join('/');
      const info = (() => {
        try {
          return lstatSync(join(this.root, shown));
        } catch {
          return null;
        }
      })();
      if (!info) break;
      if (info.isSymbolicLink()) return throughLink(shown);
    }
    return null;
  }

  /** Refuses what is outside the workspace, by the .gitignore files as the disk has them now. */
  private async confine(path: string): Promise<void> {
    if (!this.inside(path)) throw new FolderEdgeError('outside', `"${path}" is outside the folder.`);
    await this.refreshAbove([path]);
    const why = this.outsideByRules(path);
    if (why) throw new FolderEdgeError('ignored', why);
  }

  private outsideByRules(path: string): string | null {
    const long = path.split('/').find((name) => new TextEncoder().encode(name).byteLength > maxNameBytes);
    if (long !== undefined) {
      return `"${long.slice(0, 40)}…" is ${new TextEncoder().encode(long).byteLength} bytes long; a file system allows ${maxNameBytes} bytes per name, so it could never be written to the folder. Choose a shorter name.`;
    }
    if (inGitFolder(path)) return `"${path}" is inside .git, which belongs to git: a workspace never writes there.`;
    if (this.excluded.some((folder) => isWithin(path, folder))) return `"${path}" is inside the gateway's own data folder: a workspace never writes there.`;
    if (this.ignored(path)) {
      return `"${path}" is ignored (by a .gitignore on disk, or by default: node_modules, dist, .flint-data and the like), so it is outside the workspace: it cannot be created, renamed onto or deleted here.`;
    }
    return null;
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
    if (under === undefined) return this.filesUnder('');
    const folder = this.inside(under) && !this.ignored(`${under}/`) && !this.ignored(under) ? await lstat(join(this.root, under)).catch(() => null) : null;
    return folder?.isDirectory() ? this.filesUnder(under) : [];
  }

  /** The files under a folder that are not ignored, each folder's .gitignore read as the disk has it. */
  private async filesUnder(top: string): Promise<Array<{ path: string; size: number }>> {
    const files: Array<{ path: string; size: number }> = [];
    const walk = async (folder: string): Promise<void> => {
      if (folder !== '') await this.refreshRules(folder);
      const entries = await readdir(join(this.root, folder), { withFileTypes: true }).catch((error: unknown) => {
        if (folder === top && top !== '') return []; // not a folder (any more)
        throw error;
      });
      const folders: string[] = [];
      const candidates: Array<{ path: string; link: boolean }> = [];
      for (const entry of entries) {
        const path = folder ? `${folder}/${entry.name}` : entry.name;
        if (this.ignored(entry.isDirectory() ? `${path}/` : path) || this.ignored(path)) continue;
        // Links are not followed into folders; a linked file is read only if it stays inside.
        if (entry.isDirectory()) folders.push(path);
        else if (entry.isFile() || entry.isSymbolicLink()) candidates.push({ path, link: !entry.isFile() });
      }
      // A folder's files are looked at together, and its folders walked together (issue 36: one
      // system call at a time made listing 5,000 files as slow as reading them).
      const found = await Promise.all(
        candidates.map(async ({ path, link }) => {
          if (link && (await this.realInside(path)) === null) return null;
          const info = await stat(join(this.root, path)).catch(() => null);
          return info?.isFile() ? { path, size: info.size } : null;
        }),
      );
      for (const file of found) if (file) files.push(file);
      await Promise.all(folders.map(walk));
    };
    await walk(top);
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

  readSync(path: string): { bytes: Uint8Array; mode: number } | null {
    const absolute = this.inside(path);
    if (!absolute) return null;
    try {
      const real = realpathSync(absolute);
      if (!real.startsWith(this.root + sep)) return null;
      const info = statSync(real);
      if (!info.isFile()) return null;
      return { bytes: new Uint8Array(readFileSync(real)), mode: info.mode & 0o777 };
    } catch {
      return null;
    }
  }

  async write(path: string, bytes: Uint8Array, mode?: number, expected?: string | null): Promise<boolean> {
    await this.confine(path);
    this.noteOurs(path, new TextDecoder().decode(bytes));
    return this.folder.write(path, bytes, mode, expected);
  }

  async remove(path: string): Promise<void> {
    await this.confine(path);
    this.noteOurs(path, null);
    await this.folder.remove(path);
  }

  async rename(from: string, to: string): Promise<void> {
    await this.confine(from);
    await this.confine(to);
    // A .gitignore moved in lands as the owner's rules there (it only hides more: the target was free).
    this.noteOurs(from, null);
    await this.folder.rename(from, to);
  }

  /**
   * The workspace changes a .gitignore (an editor typed in it, deleted or moved it): what it makes
   * of the file is known as ours when the disk shows it, so it may hide more but never shows more.
   */
  private noteOurs(path: string, text: string | null): void {
    if (path !== '.gitignore' && !path.endsWith('/.gitignore')) return;
    const folder = path.slice(0, Math.max(path.lastIndexOf('/'), 0));
    const rules = this.rules.get(folder) ?? { owner: null, typed: null, ours: null, stamp: '' };
    rules.ours = { text };
    this.rules.set(folder, rules);
  }

  async watch(onEvents: (events: DiskEvent[]) => void): Promise<() => Promise<void>> {
    // Batches are decided one after another, each by the .gitignore files as the disk has them
    // once the batch is in: `newdir/.gitignore` and `newdir/secret.txt` written together hide the
    // secret whichever event came first (0025).
    let batches = Promise.resolve();
    const decide = async (events: watcher.Event[]): Promise<void> => {
      const paths = events.map((event) => ({ type: event.type, path: posix(relative(this.root, event.path)) })).filter(({ path }) => path && !path.startsWith('..'));
      await this.refreshAbove(paths.map(({ path }) => path));
      const relevant = paths.filter(({ path }) => !this.ignored(path));
      // A folder made with files in it at once (mkdir, unzip, git checkout): the watcher may
      // start watching it only after they were written, so what it holds is listed here.
      const reported = new Set(relevant.map(({ path }) => path));
      for (const { type, path } of [...relevant]) {
        if (type !== 'create' || !(await lstat(join(this.root, path)).catch(() => null))?.isDirectory()) continue;
        // (A folder gone again by now holds nothing to add.)
        for (const file of await this.filesUnder(path).catch(() => [])) {
          if (!reported.has(file.path)) relevant.push({ type: 'create', path: file.path });
        }
      }
      if (relevant.length) onEvents(relevant);
    };
    const subscription = await watcher.subscribe(
      this.root,
      (error, events) => {
        if (error) return;
        batches = batches.then(() => decide(events)).catch((failure: unknown) => process.emitWarning(`Flint's folder watcher dropped a batch: ${String(failure)}`));
      },
      { ignore: [...defaultIgnores.map((name) => `**/${name}`), ...this.excluded] },
    );
    return async () => {
      await subscription.unsubscribe();
      await batches;
    };
  }
}

