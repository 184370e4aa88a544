import { fuzzyScore } from './fuzzyScore';

/** An @-mention being typed: where its `@` is, and what follows it up to the caret. */
export interface MentionQuery {
  start: number;
  query: string;
}

/** The mention the caret is in (`@src/a` with the caret after `a`), if any. */
export function mentionQueryAt(text: string, caret: number): MentionQuery | null {
  const match = /(?:^|\s)@([^\s@]*)$/.exec(text.slice(0, caret));
  if (!match) return null;
  const query = match[1] ?? '';
  return { start: caret - query.length - 1, query };
}

/** The files that best match what follows an `@`, best first. */
export function suggestMentions(paths: Iterable<string>, query: string, limit = 8): string[] {
  const scored: Array<[string, number]> = [];
  for (const path of paths) {
    const score = fuzzyScore(path, query);
    if (score !== null) scored.push([path, score]);
  }
  return scored
    .sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0]))
    .slice(0, limit)
    .map(([path]) => path);
}

/** Replaces the mention being typed with `@path ` and says where the caret goes. */
export function completeMention(text: string, mention: MentionQuery, caret: number, path: string): { text: string; caret: number } {
  const inserted = `@${path} `;
  const rest = text.slice(caret).replace(/^\S*/, '').replace(/^ /, '');
  return { text: text.slice(0, mention.start) + inserted + rest, caret: mention.start + inserted.length };
}

/**
 * The files a message mentions: each `@path` that names a file of the workspace, in order,
 * once; punctuation that ends a sentence after it is not part of the path.
 */
export function mentionsIn(text: string, isFile: (path: string) => boolean): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/(?:^|\s)@(\S+)/g)) {
    const raw = match[1] ?? '';
    const path = isFile(raw) ? raw : raw.replace(/[.,;:!?)\]}'"]+$/, '');
    if (isFile(path) && !found.includes(path)) found.push(path);
  }
  return found;
}
