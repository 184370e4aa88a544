import type { IndexEntry } from '@flint/protocol';
import { describe, expect, it } from 'vitest';
import { buildTree, visibleRows } from './buildTree';

const file = (fileId: string): IndexEntry => ({ kind: 'file', fileId });

describe('buildTree', () => {
  it('creates the folders that file paths imply, and keeps explicit empty folders', () => {
    const tree = buildTree(new Map([['src/a/b.ts', file('1')], ['docs', { kind: 'folder' }]]));
    expect(tree.map((n) => [n.path, n.kind])).toEqual([
      ['docs', 'folder'],
      ['src', 'folder'],
    ]);
    expect(tree[1]?.children[0]?.path).toBe('src/a');
    expect(tree[1]?.children[0]?.children[0]).toMatchObject({ path: 'src/a/b.ts', name: 'b.ts', kind: 'file' });
  });

  it('lists folders before files, then names in natural order', () => {
    const tree = buildTree(
      new Map<string, IndexEntry>([
        ['file10.ts', file('1')],
        ['file2.ts', file('2')],
        ['Zeta/x.ts', file('3')],
        ['alpha/y.ts', file('4')],
      ]),
    );
    expect(tree.map((n) => n.name)).toEqual(['alpha', 'Zeta', 'file2.ts', 'file10.ts']);
  });

  it('does not list the contents of collapsed folders', () => {
    const tree = buildTree(new Map([['src/a.ts', file('1')], ['src/lib/b.ts', file('2')], ['c.ts', file('3')]]));
    const rows = (collapsed: string[]) => visibleRows(tree, new Set(collapsed)).map((r) => `${r.depth}:${r.node.path}`);
    expect(rows([])).toEqual(['0:src', '1:src/lib', '2:src/lib/b.ts', '1:src/a.ts', '0:c.ts']);
    expect(rows(['src/lib'])).toEqual(['0:src', '1:src/lib', '1:src/a.ts', '0:c.ts']);
    expect(rows(['src'])).toEqual(['0:src', '0:c.ts']);
  });
});
