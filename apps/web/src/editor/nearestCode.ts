/**
 * Most code files kept open for the TypeScript worker besides the tabs. A real project holds
 * thousands: opening every one (a doc, a sync and a presence message each) froze the page for
 * seconds and ran past the gateway's message rate, which closed the session (B12). Past this
 * many, the ones nearest the open tabs (sharing the longest folder path) are opened.
 */
export const maxCodeFilesOpen = 150;

/** The code files to keep open: all when few, else the `maxCodeFilesOpen` nearest the tabs. */
export function nearestCode(code: ReadonlyArray<[string, string]>, tabPaths: readonly string[], limit = maxCodeFilesOpen): ReadonlyArray<[string, string]> {
  if (code.length <= limit) return code;
  const closeness = (path: string) => {
    let best = 0;
    for (const tab of tabPaths) {
      let shared = 0;
      const a = path.split('/');
      const b = tab.split('/');
      while (shared < a.length - 1 && shared < b.length - 1 && a[shared] === b[shared]) shared++;
      best = Math.max(best, shared + 1);
    }
    return best;
  };
  return [...code]
    .map((entry) => ({ entry, score: closeness(entry[1]), depth: entry[1].split('/').length }))
    .sort((x, y) => y.score - x.score || x.depth - y.depth || (x.entry[1] < y.entry[1] ? -1 : 1))
    .slice(0, limit)
    .map(({ entry }) => entry);
}
