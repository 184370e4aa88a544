/** A `path:line[:column]` a command printed (a compiler error, a test failure), as a link. */
export interface FileLink {
  path: string;
  line: number;
  /** 0-based, end exclusive, in the text searched. */
  start: number;
  end: number;
}

const linkPattern = /(?:^|[\s('"`])((?:\.\/|\/workspace\/)?[\w@.+-]+(?:\/[\w@.+-]+)*\.[A-Za-z0-9]+)(?::(\d+)(?::\d+)?|\((\d+),\d+\))/g;

/**
 * Links in one line of terminal text: `src/a.ts:12`, `src/a.ts:12:5`, `./a.ts:3`, tsc's
 * `src/a.ts(12,5)`, and the sandbox's absolute `/workspace/src/a.ts:12` (the workspace's root).
 */
export function findFileLinks(text: string): FileLink[] {
  const links: FileLink[] = [];
  for (const match of text.matchAll(linkPattern)) {
    const written = match[1]!;
    const line = Number(match[2] ?? match[3]);
    if (!Number.isSafeInteger(line) || line < 1) continue;
    const start = match.index + match[0].indexOf(written);
    const end = start + written.length + (match[0].length - match[0].indexOf(written) - written.length);
    links.push({ path: written.replace(/^\.\//, '').replace(/^\/workspace\//, ''), line, start, end });
  }
  return links;
}
