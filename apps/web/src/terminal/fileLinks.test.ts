import { describe, expect, it } from 'vitest';
import { findFileLinks } from './fileLinks';

describe('file links in terminal text', () => {
  it('finds path:line, path:line:column, tsc-style and sandbox-absolute paths', () => {
    expect(findFileLinks('src/format.ts:12:5 - error TS2322').map(({ path, line }) => ({ path, line }))).toEqual([{ path: 'src/format.ts', line: 12 }]);
    expect(findFileLinks('  at run (./src/index.ts:3)').map((l) => [l.path, l.line])).toEqual([['src/index.ts', 3]]);
    expect(findFileLinks('src/a.ts(7,2): error').map((l) => [l.path, l.line])).toEqual([['src/a.ts', 7]]);
    expect(findFileLinks('/workspace/README.md:1 and lib/b.js:40').map((l) => [l.path, l.line])).toEqual([['README.md', 1], ['lib/b.js', 40]]);
  });

  it('covers exactly the link text in the line', () => {
    const text = 'error in src/a.ts:12:5 here';
    const [link] = findFileLinks(text);
    expect(text.slice(link!.start, link!.end)).toBe('src/a.ts:12:5');
  });

  it('finds nothing in plain text, times or version numbers without a line', () => {
    expect(findFileLinks('10:30 done, node v20.1.0, ratio 1:2')).toEqual([]);
  });
});
