import type { IndexEntry } from '@flint/protocol';
import { entryBytes, isBinaryEntry } from '../project/binaryFiles';

export interface TreeNode {
  path: string;
  name: string;
  kind: 'file' | 'folder';
  children: TreeNode[];
  /** A binary file (no document): its size, when the gateway gave one. */
  binary?: { bytes: number | null };
}

export interface TreeRow {
  node: TreeNode;
  depth: number;
}

/**
 * The tree of an index: explicit entries plus the folders their paths imply ("src/a.ts" implies
 * "src"). Folders first, then names in natural order, as in every file explorer.
 */
export function buildTree(entries: ReadonlyMap<string, IndexEntry>): TreeNode[] {
  const root: TreeNode = { path: '', name: '', kind: 'folder', children: [] };
  const folders = new Map<string, TreeNode>([['', root]]);
  const folderAt = (path: string): TreeNode => {
    const existing = folders.get(path);
    if (existing) return existing;
    const slash = path.lastIndexOf('/');
    const parent = folderAt(slash === -1 ? '' : path.slice(0, slash));
    const node: TreeNode = { path, name: path.slice(slash + 1), kind: 'folder', children: [] };
    parent.children.push(node);
    folders.set(path, node);
    return node;
  };
  for (const [path, entry] of entries) {
    if (entry.kind === 'folder') {
      folderAt(path);
      continue;
    }
    const slash = path.lastIndexOf('/');
    folderAt(slash === -1 ? '' : path.slice(0, slash)).children.push({
      path,
      name: path.slice(slash + 1),
      kind: 'file',
      children: [],
      ...(isBinaryEntry(entry) && { binary: { bytes: entryBytes(entry) } }),
    });
  }
  sortTree(root.children);
  return root.children;
}

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

function sortTree(nodes: TreeNode[]): void {
  nodes.sort((a, b) => (a.kind === b.kind ? collator.compare(a.name, b.name) : a.kind === 'folder' ? -1 : 1));
  for (const node of nodes) sortTree(node.children);
}

/** The rows a reader sees: children of collapsed folders are left out. */
export function visibleRows(nodes: readonly TreeNode[], collapsed: ReadonlySet<string>, depth = 0, out: TreeRow[] = []): TreeRow[] {
  for (const node of nodes) {
    out.push({ node, depth });
    if (node.kind === 'folder' && !collapsed.has(node.path)) visibleRows(node.children, collapsed, depth + 1, out);
  }
  return out;
}

/** A tree with more rows than this starts with its folders collapsed (issue 36); a smaller one open. */
export const collapseAbove = 300;

/**
 * The folders a tree starts with collapsed: none in a small tree; in a large one every folder
 * but those holding an open tab's file, so the tree opens as a short list and the tabs' files show.
 */
export function initiallyCollapsed(nodes: readonly TreeNode[], openPaths: readonly string[]): Set<string> {
  const folders: string[] = [];
  let rows = 0;
  const walk = (list: readonly TreeNode[]) => {
    for (const node of list) {
      rows++;
      if (node.kind === 'folder') {
        folders.push(node.path);
        walk(node.children);
      }
    }
  };
  walk(nodes);
  if (rows <= collapseAbove) return new Set();
  const keep = new Set<string>();
  for (const path of openPaths) for (let at = path.lastIndexOf('/'); at > 0; at = path.lastIndexOf('/', at - 1)) keep.add(path.slice(0, at));
  return new Set(folders.filter((folder) => !keep.has(folder)));
}
