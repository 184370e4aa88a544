import type { IndexEntry, UnsyncedReason } from '@flint/protocol';

/** Why a folder project's file no longer reaches the disk, or null while it does. */
export function unsyncedReason(entry: IndexEntry | undefined): UnsyncedReason | null {
  return entry?.kind === 'file' && (entry.unsynced === 'not-text' || entry.unsynced === 'too-large') ? entry.unsynced : null;
}

/** What the tab says about it: what happened, that nothing typed is lost, and what to do. */
export function describeUnsynced(reason: UnsyncedReason): string {
  switch (reason) {
    case 'not-text':
      return 'This file is no longer UTF-8 text on disk (saved in another encoding, or binary). What you type here is kept in the workspace but not written to the file; save it as UTF-8 on disk and the two are merged.';
    case 'too-large':
      return 'This file grew past 8 MB on disk, more than the editor syncs. What you type here is kept in the workspace but not written to the file; make it smaller on disk and the two are merged.';
  }
}
