/**
 * B5's stream markers, for the token source (Node) and the control pages (browser) alike: a
 * marker is `@` and six digits, and every generated line ends with its own, so a page can tell
 * exactly when each line reached it and the server when it sent it. (Not `#`: `#000042` is a CSS
 * colour to Monaco's default colour decorator, which then decorated every line of the stream — a
 * cost real code does not have.) bench/lib/browserProbe.ts runs inside the page and cannot import
 * this: it spells the same pattern out.
 */
export const markerPattern = /@(\d{6})/g;

/** The end of generated line `line`: a comment holding its marker. */
export function markerComment(line: number): string {
  return `// @${String(line).padStart(6, '0')}`;
}
