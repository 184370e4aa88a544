import type { IndexEntry } from '@flint/protocol';

/**
 * Whether a tree entry is a binary file: a folder project's file that is not text (an image, an
 * archive) or too large to edit. It is listed with its size and has no document, so it must
 * never be opened as one (the gateway answers `doc.missing`).
 */
export function isBinaryEntry(entry: IndexEntry | undefined): boolean {
  return entry?.kind === 'file' && entry.binary === true;
}

/** The size a binary entry reports, or null when it gives none. */
export function entryBytes(entry: IndexEntry | undefined): number | null {
  return entry?.kind === 'file' && typeof entry.bytes === 'number' && entry.bytes >= 0 ? entry.bytes : null;
}

const units = ['KB', 'MB', 'GB', 'TB'];

/** A size as file managers write it: "512 B", "12.3 KB", "148 MB" (powers of 1024). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${Math.max(0, Math.round(bytes))} B`;
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value < 100 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}
