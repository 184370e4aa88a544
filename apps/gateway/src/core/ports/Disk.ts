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
   * `read`, now: a listed file's document is made the moment someone opens it (`Room.doc` is
   * synchronous); one file, so a few system calls.
   */
  readSync(path: string): { bytes: Uint8Array; mode: number } | null;
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
  /**
   * Why a workspace may not create, rename onto or delete `path` (it is ignored, git's, the
   * gateway's own data, or behind a link on disk), or null. A sentence for people.
   */
  outsideWorkspace(path: string): string | null;
}
