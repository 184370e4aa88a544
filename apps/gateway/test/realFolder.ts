/**
 * Test support for folder projects on a real disk: temporary folders (git repositories when
 * asked), NodeDisk with its real watcher, a FolderSync on the in-memory gateway harness, and a
 * wait for conditions (the watcher and the debounced writes run on real time).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Harness } from './testHarness';
import type { DiskEvent } from '../src/core/ports/Disk';
import { NodeDisk } from '../src/project/NodeDisk';
import { FolderSync } from '../src/project/FolderSync';

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.email=test@flint.dev', '-c', 'user.name=Flint Test', ...args], { cwd, encoding: 'utf8' });
}

export const readText = (root: string, path: string): string | null => {
  try {
    return readFileSync(join(root, path), 'utf8');
  } catch {
    return null;
  }
};

/** Folders and syncs made by a test file, gone again with `cleanup()` (call it in afterEach). */
export class RealFolders {
  private readonly folders: string[] = [];
  private readonly syncs: FolderSync[] = [];

  folder(files: Record<string, string | Uint8Array>, options: { git?: boolean } = {}): string {
    const root = mkdtempSync(join(tmpdir(), 'flint-folder-'));
    this.folders.push(root);
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(join(root, path, '..'), { recursive: true });
      writeFileSync(join(root, path), content);
    }
    if (options.git) {
      git(root, 'init', '-q', '-b', 'main');
      git(root, 'add', '-A');
      git(root, 'commit', '-qm', 'init');
    }
    return root;
  }

  /** Opens `root` as a folder project; `batches` receives what the watcher delivers, after the sync. */
  async open(root: string, options: { writeDelayMs?: number; renameWindowMs?: number; batches?: DiskEvent[][] } = {}) {
    const h = new Harness();
    const ws = h.gateway.createWorkspace('Folder');
    const held = h.gateway.holdRoom(ws.workspaceId)!;
    const disk = await NodeDisk.open(root);
    const { batches } = options;
    if (batches) {
      const watch = disk.watch.bind(disk);
      disk.watch = (onEvents) =>
        watch((events) => {
          onEvents(events);
          batches.push(events);
        });
    }
    const sync = new FolderSync({ workspaceId: ws.workspaceId, room: held.room, disk, bases: { get: (k) => h.store.getMeta(k), set: (k, v) => h.store.setMeta(k, v) }, log: () => {}, writeDelayMs: options.writeDelayMs ?? 20, renameWindowMs: options.renameWindowMs });
    this.syncs.push(sync);
    await sync.start();
    // The listed files are read after the start (text or binary, a digest to pair a move by).
    await sync.flushed();
    const alice = h.client(ws.workspaceId, ws.owner.token);
    h.flush();
    return { h, sync, alice, root, room: held.room, workspaceId: ws.workspaceId, token: ws.owner.token };
  }

  async cleanup(): Promise<void> {
    await Promise.all(this.syncs.splice(0).map((sync) => sync.stop()));
    for (const folder of this.folders.splice(0)) rmSync(folder, { recursive: true, force: true });
  }
}

export { untilFlushed as until } from './testHarness';
