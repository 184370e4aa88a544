import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Log } from '../core/ports/Log';
import type { Room } from '../core/Room';
import { NodeDisk } from '../project/NodeDisk';
import { FolderSync } from '../project/FolderSync';
import type { FolderHooks, WorkspaceFolder } from './TerminalService';

export interface WorkspaceFoldersOptions {
  /** The folder project's sync and root, when the workspace is one (its processes work there). */
  folderProject(workspaceId: string): { root: string; sync: FolderSync } | null;
  /** Keeps the workspace's room loaded while its working copy follows it. */
  holdRoom(workspaceId: string): { room: Room; release(): void } | null;
  /** Where working copies of workspaces without a folder are made (one private folder each). */
  workRoot: string;
  /** The gateway's data folder: hidden from the sandbox when it lies inside a project's folder. */
  dataDir: string;
  log: Log;
  /** The workspace's storage quota in bytes: a working copy's files enter the workspace within it. */
  storageQuota?(workspaceId: string): number;
  /** The most disk a working copy may use (default 1 GiB): past it its processes end ([P49]). */
  workingCopyBytes?: number;
  /** How often a working copy's disk use is measured (default 3 s). */
  diskCheckMs?: number;
}

/**
 * The disk a folder uses (allocated blocks, so a sparse file counts what it holds), stopping
 * once past `limit`.
 */
export async function diskBytes(root: string, limit: number): Promise<number> {
  let total = 0;
  const folders = [root];
  while (folders.length > 0 && total <= limit) {
    const folder = folders.pop()!;
    let names: string[];
    try {
      names = await readdir(folder);
    } catch {
      continue; // gone meanwhile
    }
    for (const name of names) {
      try {
        const stat = await lstat(join(folder, name));
        total += stat.blocks * 512;
        if (stat.isDirectory()) folders.push(join(folder, name));
      } catch {
        // gone meanwhile
      }
    }
  }
  return total;
}

/** How long a measure of the workspace's files is used (plus what was admitted since). */
const usageTtlMs = 2000;

/**
 * The bytes of the workspace's files, as the upload's quota counts them: a binary file's size, a
 * document's text, a listed file's size on disk (it has no document yet).
 */
function workspaceBytes(room: Room, root: string): number {
  let total = 0;
  for (const [path, entry] of room.entries) {
    if (entry.kind !== 'file') continue;
    if (entry.binary) total += entry.bytes ?? 0;
    else if (entry.listed) {
      try {
        total += statSync(join(root, path)).size;
      } catch {
        // gone from the disk meanwhile: its delete is on its way
      }
    } else total += Buffer.byteLength(room.textOf(entry.fileId) ?? '');
  }
  return total;
}

/**
 * The folder a workspace's terminals work in. A folder project: the folder itself (its
 * FolderSync already keeps it and the documents in step). Any other workspace: a working copy in
 * a fresh private folder, kept in step with the documents both ways by a FolderSync of its own
 * for as long as a terminal needs it, then deleted.
 */
export function workspaceFolders(options: WorkspaceFoldersOptions): (workspaceId: string, hooks?: FolderHooks) => Promise<WorkspaceFolder> {
  return async (workspaceId, hooks) => {
    const project = options.folderProject(workspaceId);
    if (project) {
      return { root: project.root, hidden: [options.dataDir], flush: () => project.sync.flushed(), release: async () => {} };
    }
    const held = options.holdRoom(workspaceId);
    if (!held) throw new Error('no such workspace');
    mkdirSync(options.workRoot, { recursive: true, mode: 0o700 });
    const root = mkdtempSync(join(options.workRoot, `${workspaceId}-`));
    const bases = new Map<string, string>();
    let sync: FolderSync | null = null;
    // What a shell writes enters the workspace only within its storage quota ([P49]).
    let usage: { bytes: number; at: number } | null = null;
    const refused = new Set<string>();
    const admit = (path: string, bytes: number): boolean => {
      const quota = options.storageQuota?.(workspaceId);
      if (quota === undefined) return true;
      const now = Date.now();
      if (!usage || now - usage.at > usageTtlMs) usage = { bytes: workspaceBytes(held.room, root), at: now };
      if (usage.bytes + bytes <= quota) {
        usage.bytes += bytes;
        refused.delete(path);
        return true;
      }
      // Once per file until it fits: a file rewritten in a loop does not fill the screen.
      if (!refused.has(path)) {
        refused.add(path);
        hooks?.notice(`${path} was not added to the workspace: it would pass the workspace's storage quota (${megabytes(quota)}). It stays in this folder only.`);
      }
      return false;
    };
    try {
      const disk = await NodeDisk.open(root);
      sync = new FolderSync({ workspaceId, room: held.room, disk, bases: { get: (k) => bases.get(k) ?? null, set: (k, v) => void bases.set(k, v) }, log: options.log, admit });
      await sync.start();
    } catch (error) {
      held.release();
      rmSync(root, { recursive: true, force: true });
      throw error;
    }
    const started = sync;
    // A shell could fill the gateway's disk through the working copy: its use is measured, and
    // past the limit its processes end and the copy is let go.
    const limit = options.workingCopyBytes ?? 1024 * 1024 * 1024;
    let measuring = false;
    const diskCheck = setInterval(() => {
      if (measuring) return;
      measuring = true;
      void diskBytes(root, limit)
        .then((bytes) => {
          if (bytes > limit) {
            clearInterval(diskCheck);
            hooks?.exceeded(`This terminal's folder passed its disk limit (${megabytes(limit)}): its processes were ended and the folder discarded. Files already in the workspace stay; open a terminal to start again.`);
          }
        })
        .finally(() => (measuring = false));
    }, options.diskCheckMs ?? 3000);
    diskCheck.unref();
    return {
      root,
      hidden: [],
      flush: () => started.flushed(),
      release: async () => {
        clearInterval(diskCheck);
        await started.stop();
        held.release();
        rmSync(root, { recursive: true, force: true });
      },
    };
  };
}

function megabytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
