import { lineSimilarity } from './fileText';

/** A file deleted on disk, waiting for the create that would make it a rename. */
export interface DeletedFile {
  path: string;
  /** What the disk held when it was last synced (`contentDigest`), null if unknown. */
  digest: string | null;
  /** The text last synced, null if unknown (asked only when texts are compared). */
  base(): string | null;
}

/** A new file is a deleted one moved and changed if at least this share of its lines are the same. */
export const minRenameSimilarity = 0.5;
/** Texts are compared (not only digests) while no more deletes than this wait: a pass over each costs. */
const maxTextCandidates = 64;

/**
 * Which deleted file a file created at `path` is, moved (issue 32): the one whose last synced bytes
 * it has, a same-named one first (a moved folder of `__init__.py`s); failing that, the one whose
 * text is most like its `text`, if at least `minRenameSimilarity` of the lines (moved and changed
 * in one go: a checkout of a branch that renamed it; git's rename detection asks the same, by
 * bytes, at 50%). Undefined: a new file.
 */
export function renamedFrom(path: string, digest: string, text: () => string | undefined, deleted: readonly DeletedFile[]): string | undefined {
  const name = baseName(path);
  const exact = deleted.filter((file) => file.digest === digest);
  if (exact.length > 0) return (exact.find((file) => baseName(file.path) === name) ?? exact[0]!).path;
  if (deleted.length === 0 || deleted.length > maxTextCandidates) return undefined;
  const created = text();
  if (created === undefined) return undefined;
  let from: DeletedFile | undefined;
  let best = 0;
  for (const file of deleted) {
    const base = file.base();
    if (base === null) continue;
    const similarity = lineSimilarity(base, created);
    if (similarity < minRenameSimilarity) continue;
    if (similarity > best || (similarity === best && baseName(from!.path) !== name && baseName(file.path) === name)) {
      best = similarity;
      from = file;
    }
  }
  return from?.path;
}

const baseName = (path: string) => path.slice(path.lastIndexOf('/') + 1);
