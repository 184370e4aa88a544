import { collectFileChanges, type FileChange } from './collectFileChanges';
import { locateHunk, type LocateFailure } from './locateHunk';
import type { PatchEvent } from './PatchReader';

export type ApplyResult =
  /** `text` is the file's new content; null when the patch deletes the file. */
  | { readonly ok: true; readonly text: string | null }
  /** The hunk at `hunkIndex` (starting on patch line `line`) could not be placed; nothing applied. */
  | { readonly ok: false; readonly hunkIndex: number; readonly line: number; readonly failure: LocateFailure };

const asText = (lines: readonly string[]) => lines.map((line) => `${line}\n`).join('');

/**
 * Applies one file's part of a patch to the file's whole text at once ([R13]): the reference
 * the streaming engine is measured against, and its path when nothing needs to stream.
 * `file` is a {@link FileChange}, or the events from that file's `file-start` to its `file-end`.
 * A move keeps the text; the new path is `file.moveTo`.
 */
export function applyPatchToText(text: string, file: FileChange | readonly PatchEvent[]): ApplyResult {
  const change = 'kind' in file ? file : onlyFile(file);
  if (change.kind === 'delete') return { ok: true, text: null };
  if (change.kind === 'add') return { ok: true, text: asText(change.hunks.flatMap((hunk) => hunk.newLines)) };

  // A last line without a line break is still a line; the result keeps the file's ending.
  const missingBreak = text !== '' && !text.endsWith('\n');
  const body = missingBreak ? `${text}\n` : text;
  let result = '';
  let copied = 0;
  for (const [hunkIndex, hunk] of change.hunks.entries()) {
    const found = locateHunk(body, hunk, copied);
    if (!found.ok) return { ok: false, hunkIndex, line: hunk.line, failure: found };
    result += body.slice(copied, found.start) + asText(hunk.newLines);
    copied = found.end;
  }
  result += body.slice(copied);
  return { ok: true, text: missingBreak && result.endsWith('\n') ? result.slice(0, -1) : result };
}

function onlyFile(events: readonly PatchEvent[]): FileChange {
  const files = collectFileChanges(events);
  if (files.length !== 1) throw new Error(`applyPatchToText takes the events of one whole file; these hold ${files.length}.`);
  return files[0]!;
}
