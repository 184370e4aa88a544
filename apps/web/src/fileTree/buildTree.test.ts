import type { IndexEntry } from '@flint/protocol';
import { describe, expect, it } from 'vitest';
import { buildTree, collapseAbove, initiallyCollapsed, visibleRows } from './buildTree';

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

describe('initiallyCollapsed', () => {
  it('leaves a small tree open', () => {
    const tree = buildTree(new Map([['src/a/b.ts', file('1')], ['docs/x.md', file('2')]]));
    expect(initiallyCollapsed(tree, [])).toEqual(new Set());
  });

  it('collapses a large tree but for the folders holding the open tabs\' files', () => {
    const entries = new Map<string, IndexEntry>();
    for (let i = 0; i < collapseAbove; i++) entries.set(`src/m${i % 7}/f${i}.ts`, file(String(i)));
    entries.set('docs/deep/er/readme.md', file('doc'));
    const tree = buildTree(entries);
    const collapsed = initiallyCollapsed(tree, ['src/m3/f3.ts']);
    expect(collapsed.has('src')).toBe(false);
    expect(collapsed.has('src/m3')).toBe(false);
    expect(collapsed.has('src/m4')).toBe(true);
    expect(collapsed.has('docs')).toBe(true);
    expect(collapsed.has('docs/deep/er')).toBe(true);
    const rows = visibleRows(tree, collapsed).map((row) => row.node.path);
    // docs, src, src's seven folders and m3's files: a short list, the tab's file in it.
    expect(rows).toContain('src/m3/f3.ts');
    expect(rows).not.toContain('src/m4/f4.ts');
    expect(rows.length).toBe(2 + 7 + [...entries.keys()].filter((path) => path.startsWith('src/m3/')).length);
  });
});
