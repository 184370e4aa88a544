import { parentPath } from '@flint/protocol';
import type { GitChange, GitFileStatus, ProjectInfo } from '../api/projectApi';

/** The letter a changed file carries in the tree and the Changes view, as in other editors. */
export type GitMark = 'M' | 'A' | 'U' | 'D' | 'R';

export const gitMarkOf: Readonly<Record<GitFileStatus, GitMark>> = {
  modified: 'M',
  added: 'A',
  untracked: 'U',
  deleted: 'D',
  renamed: 'R',
};

export const gitStatusLabel: Readonly<Record<GitFileStatus, string>> = {
  modified: 'Modified',
  added: 'Added',
  untracked: 'Untracked',
  deleted: 'Deleted',
  renamed: 'Renamed',
};

export interface GitMarks {
  /** path → its mark. Deleted files are here too, though the tree has no row for them. */
  files: ReadonlyMap<string, GitMark>;
  /** folder path → how many changed files it holds at any depth (a folder with none is absent). */
  folders: ReadonlyMap<string, number>;
}

export const noGitMarks: GitMarks = { files: new Map(), folders: new Map() };

/**
 * The tree's marks for git's answer: a letter per changed file, and a count for every folder
 * above one, so a collapsed folder still says something inside it changed. Deleted files count
 * for their folders: the change is theirs even though the tree no longer lists the file.
 */
export function gitMarks(changes: readonly GitChange[]): GitMarks {
  if (changes.length === 0) return noGitMarks;
  const files = new Map<string, GitMark>();
  const folders = new Map<string, number>();
  for (const { path, status } of changes) {
    if (files.has(path)) continue; // one answer per path; a repeat would count twice
    files.set(path, gitMarkOf[status]);
    for (let folder = parentPath(path); folder !== ''; folder = parentPath(folder)) folders.set(folder, (folders.get(folder) ?? 0) + 1);
  }
  return { files, folders };
}

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

/** The Changes view's order: by path, numbers in natural order. */
export function sortChanges(changes: readonly GitChange[]): GitChange[] {
  return [...changes].sort((a, b) => collator.compare(a.path, b.path));
}

/** Whether two answers of /project say the same thing (git lists files in a stable order). */
export function sameProjectInfo(a: ProjectInfo | null, b: ProjectInfo | null): boolean {
  if (a === b) return true;
  if (a === null || b === null || a.folder !== b.folder) return false;
  if (a.git === null || b.git === null) return a.git === b.git;
  if (a.git.branch !== b.git.branch || a.git.files.length !== b.git.files.length) return false;
  return a.git.files.every((file, i) => file.path === b.git?.files[i]?.path && file.status === b.git.files[i]?.status);
}
