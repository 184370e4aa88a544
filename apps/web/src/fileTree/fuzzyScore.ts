import { baseName } from '@flint/protocol';

/**
 * How well `path` matches a quick-open query: the query's characters must appear in order
 * (case-insensitive). Lower is better; null when it does not match at all. A hit inside the
 * file name beats one spread over folders, then tighter and shorter paths win.
 */
export function fuzzyScore(path: string, query: string): number | null {
  if (query === '') return path.length;
  const haystack = path.toLowerCase();
  const needle = query.toLowerCase();
  let at = -1;
  let gaps = 0;
  for (const ch of needle) {
    const next = haystack.indexOf(ch, at + 1);
    if (next === -1) return null;
    gaps += next - at - 1;
    at = next;
  }
  const nameBonus = baseName(haystack).includes(needle) ? -1000 : 0;
  return nameBonus + gaps * 2 + path.length;
}
