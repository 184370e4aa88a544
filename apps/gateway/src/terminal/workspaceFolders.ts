import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Log } from '../core/ports/Log';
import type { Room } from '../core/Room';
import { NodeDisk } from '../project/NodeDisk';
import { FolderSync } from '../project/FolderSync';
import type { WorkspaceFolder } from './TerminalService';

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
}

/**
 * The folder a workspace's terminals work in. A folder project: the folder itself (its
 * FolderSync already keeps it and the documents in step). Any other workspace: a working copy in
 * a fresh private folder, kept in step with the documents both ways by a FolderSync of its own
 * for as long as a terminal needs it, then deleted.
 */
export function workspaceFolders(options: WorkspaceFoldersOptions): (workspaceId: string) => Promise<WorkspaceFolder> {
  return async (workspaceId) => {
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
    try {
      const disk = await NodeDisk.open(root);
      sync = new FolderSync({ workspaceId, room: held.room, disk, bases: { get: (k) => bases.get(k) ?? null, set: (k, v) => void bases.set(k, v) }, log: options.log });
      await sync.start();
    } catch (error) {
      held.release();
      rmSync(root, { recursive: true, force: true });
      throw error;
    }
    const started = sync;
    return {
      root,
      hidden: [],
      flush: () => started.flushed(),
      release: async () => {
        await started.stop();
        held.release();
        rmSync(root, { recursive: true, force: true });
      },
    };
  };
}
