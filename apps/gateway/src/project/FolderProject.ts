/**
 * Folder projects (issue 24): a workspace opened from a folder on the gateway's disk, kept in
 * sync with it both ways (FolderSync). What the rest of the gateway (REST endpoints) may ask of
 * one; everything a path names is confined to the folder.
 */
export interface FolderProject {
  readonly workspaceId: string;
  /** The folder, as its real path. */
  readonly root: string;
  /** Why `path` may not be written (ignored, git's, the gateway's data, behind a link), or null (DESIGN §11.3). */
  outsideWorkspace(path: string): string | null;
  /**
   * Writes uploaded files (a zip holds disk bytes) and brings them into the workspace as the
   * watcher brings any file written on disk: decoded the same way (BOM, line endings kept for the
   * next write), new files created in batches. One outcome per file, in order.
   */
  writeFiles(files: ReadonlyArray<{ path: string; bytes: Uint8Array }>): Promise<WrittenFile[]>;
  /** A text file's bytes as the folder spells it (its line endings and BOM), for a download. */
  encodeText(path: string, text: string): Uint8Array;
  /** A binary file's bytes, or null when there is none at `path` (or it is outside the folder). */
  readBinary(path: string): Promise<Uint8Array | null>;
}

/** What became of one file an upload wrote to the folder. */
export type WrittenFile = { path: string; ok: true; created: boolean } | { path: string; ok: false; message: string };

/** The folder projects this gateway serves, by workspace. */
export interface ProjectRegistry {
  get(workspaceId: string): FolderProject | null;
}

export const noProjects: ProjectRegistry = { get: () => null };
