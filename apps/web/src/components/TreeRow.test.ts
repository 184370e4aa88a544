import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { TreeNode } from '../fileTree/buildTree';
import type { GitMark } from '../project/gitMarks';
import { TreeRow } from './TreeRow';

const noop = () => {};

function row(node: Partial<TreeNode> & Pick<TreeNode, 'path' | 'kind'>, options: { gitMark?: GitMark | null; changesInside?: number; canEdit?: boolean } = {}): string {
  const full: TreeNode = { name: node.path.slice(node.path.lastIndexOf('/') + 1), children: [], ...node };
  return renderToStaticMarkup(
    createElement(TreeRow, {
      node: full,
      depth: 0,
      active: false,
      selected: false,
      expanded: true,
      dropTarget: false,
      canEdit: options.canEdit ?? true,
      peerColors: [],
      gitMark: options.gitMark ?? null,
      changesInside: options.changesInside ?? 0,
      onClick: noop,
      onRename: noop,
      onDelete: noop,
      onDownload: noop,
      onDragStart: noop,
      onDragOver: noop,
      onDrop: noop,
    }),
  );
}

describe('a row of the tree', () => {
  it('shows a binary file with its size', () => {
    const html = row({ path: 'img/logo.png', kind: 'file', binary: { bytes: 12_595 } });
    expect(html).toContain('data-binary="true"');
    expect(html).toContain('tree-icon--binary');
    expect(html).toMatch(/data-testid="tree-binary-size">12.3 KB</);
  });

  it('shows a binary file without a size when the gateway gave none', () => {
    const html = row({ path: 'blob', kind: 'file', binary: { bytes: null } });
    expect(html).toContain('data-binary="true"');
    expect(html).not.toContain('tree-binary-size');
  });

  it('marks a changed file with its letter and colour', () => {
    const html = row({ path: 'src/a.ts', kind: 'file' }, { gitMark: 'M' });
    expect(html).toContain('data-git="M"');
    expect(html).toContain('tree-row--git-M');
    expect(html).toMatch(/data-testid="tree-git-mark"[^>]*>M</);
  });

  it('puts a dot on a folder holding changes, and nothing on one without', () => {
    expect(row({ path: 'src', kind: 'folder' }, { changesInside: 3 })).toMatch(/data-testid="tree-git-dot" title="3 changed files inside"/);
    const clean = row({ path: 'lib', kind: 'folder' });
    expect(clean).not.toContain('tree-git-dot');
    expect(clean).not.toContain('data-git');
  });

  it('offers a folder as a zip to everyone, rename and delete only to editors', () => {
    const viewer = row({ path: 'src', kind: 'folder' }, { canEdit: false });
    expect(viewer).toContain('download-folder-button');
    expect(viewer).not.toContain('delete-button');
    expect(row({ path: 'a.ts', kind: 'file' }, { canEdit: false })).not.toContain('download-folder-button');
  });
});
