import type { FileKind, PatchEvent } from './PatchReader';

/** One hunk, whole: what `applyPatchToText` replaces, and what `locateHunk` looks for. */
export interface HunkChange {
  readonly header?: string;
  /** Context and removed lines, in order. */
  readonly oldLines: readonly string[];
  /** Context and added lines, in order. */
  readonly newLines: readonly string[];
  readonly endOfFile: boolean;
  /** The patch line the hunk starts on, for messages. */
  readonly line: number;
}

export interface FileChange {
  readonly kind: FileKind;
  readonly path: string;
  readonly moveTo?: string;
  readonly hunks: readonly HunkChange[];
}

/**
 * Folds a reader's events into the files they change, each once its `file-end` has come: a
 * file the patch broke off in (an `error`, or no `finish()` yet) is left out.
 */
export function collectFileChanges(events: Iterable<PatchEvent>): FileChange[] {
  const files: FileChange[] = [];
  let file: { kind: FileKind; path: string; moveTo?: string; hunks: HunkChange[] } | null = null;
  let hunk: { header?: string; oldLines: string[]; newLines: string[]; line: number } | null = null;
  let added = '';
  for (const event of events) {
    switch (event.type) {
      case 'file-start':
        file = { kind: event.kind, path: event.path, hunks: [], ...(event.moveTo === undefined ? {} : { moveTo: event.moveTo }) };
        break;
      case 'hunk-start':
        hunk = { oldLines: [], newLines: [], line: event.line, ...(event.header === undefined ? {} : { header: event.header }) };
        added = '';
        break;
      case 'context':
        hunk?.oldLines.push(event.text);
        hunk?.newLines.push(event.text);
        break;
      case 'removed':
        hunk?.oldLines.push(event.text);
        break;
      case 'added': {
        // An added line may come in pieces; it is whole at its line break.
        added += event.text;
        const lines = added.split('\n');
        added = lines.pop()!;
        hunk?.newLines.push(...lines);
        break;
      }
      case 'hunk-end':
        if (hunk) file?.hunks.push({ ...hunk, endOfFile: event.endOfFile });
        hunk = null;
        break;
      case 'file-end':
        if (file) files.push(file);
        file = null;
        break;
      case 'end':
      case 'error':
        return files;
    }
  }
  return files;
}
