import { memo, type DragEvent } from 'react';
import type { TreeNode } from '../fileTree/buildTree';
import { formatBytes } from '../project/binaryFiles';
import type { GitMark } from '../project/gitMarks';
import { Icon } from './Icon';

const markTitles: Record<GitMark, string> = {
  M: 'Modified since HEAD',
  A: 'Added to git',
  U: 'Untracked: new, not in git yet',
  D: 'Deleted',
  R: 'Renamed',
};

interface Props {
  node: TreeNode;
  depth: number;
  active: boolean;
  selected: boolean;
  expanded: boolean;
  dropTarget: boolean;
  canEdit: boolean;
  /** Colours of the peers who have this file open. */
  peerColors: readonly string[];
  /** How git sees this file; null when unchanged (or no git). */
  gitMark: GitMark | null;
  /** For a folder: how many changed files it holds. */
  changesInside: number;
  onClick(node: TreeNode): void;
  onRename(node: TreeNode): void;
  onDelete(node: TreeNode): void;
  onDownload(node: TreeNode): void;
  onDragStart(node: TreeNode, event: DragEvent): void;
  onDragOver(node: TreeNode, event: DragEvent): void;
  onDrop(node: TreeNode, event: DragEvent): void;
}

export const TreeRow = memo(function TreeRow(props: Props) {
  const { node, depth, active, selected, expanded, dropTarget, canEdit, peerColors, gitMark, changesInside } = props;
  const isFolder = node.kind === 'folder';
  const className = [
    'tree-row',
    active && 'tree-row--active',
    selected && 'tree-row--selected',
    dropTarget && 'tree-row--drop',
    gitMark && `tree-row--git-${gitMark}`,
  ]
    .filter(Boolean)
    .join(' ');
  return (
    <div
      className={className}
      data-testid="tree-item"
      data-path={node.path}
      data-kind={node.kind}
      data-git={gitMark ?? undefined}
      data-binary={node.binary ? 'true' : undefined}
      role="treeitem"
      aria-level={depth + 1}
      aria-selected={selected}
      aria-expanded={isFolder ? expanded : undefined}
      style={{ paddingLeft: 8 + depth * 12 }}
      title={node.path}
      draggable={canEdit}
      onClick={() => props.onClick(node)}
      onDoubleClick={() => canEdit && props.onRename(node)}
      onDragStart={(event) => props.onDragStart(node, event)}
      onDragOver={(event) => props.onDragOver(node, event)}
      onDrop={(event) => props.onDrop(node, event)}
    >
      {isFolder ? (
        <Icon name="chevron" className={expanded ? 'tree-chevron tree-chevron--open' : 'tree-chevron'} />
      ) : (
        <span className="tree-chevron-spacer" />
      )}
      <Icon
        name={isFolder ? 'folder' : node.binary ? 'binary' : 'file'}
        className={isFolder ? 'tree-icon tree-icon--folder' : node.binary ? 'tree-icon tree-icon--binary' : `tree-icon ${fileIconClass(node.name)}`}
      />
      <span className="tree-name">{node.name}</span>
      {node.binary && node.binary.bytes !== null && (
        <span className="tree-size" data-testid="tree-binary-size">
          {formatBytes(node.binary.bytes)}
        </span>
      )}
      {peerColors.length > 0 && (
        <span className="tree-peers">
          {peerColors.slice(0, 3).map((color, i) => (
            <span key={i} className="peer-dot" style={{ background: color }} />
          ))}
        </span>
      )}
      {(canEdit || isFolder) && (
        <span className="tree-actions">
          {isFolder && (
            <button
              type="button"
              className="icon-button"
              data-testid="download-folder-button"
              title="Download as zip"
              aria-label={`Download ${node.name} as zip`}
              onClick={(event) => {
                event.stopPropagation();
                props.onDownload(node);
              }}
            >
              <Icon name="download" />
            </button>
          )}
          {canEdit && (
            <>
              <button
                type="button"
                className="icon-button"
                title="Rename (F2)"
                aria-label={`Rename ${node.name}`}
                onClick={(event) => {
                  event.stopPropagation();
                  props.onRename(node);
                }}
              >
                <Icon name="pencil" />
              </button>
              <button
                type="button"
                className="icon-button"
                data-testid="delete-button"
                title="Delete (Del)"
                aria-label={`Delete ${node.name}`}
                onClick={(event) => {
                  event.stopPropagation();
                  props.onDelete(node);
                }}
              >
                <Icon name="trash" />
              </button>
            </>
          )}
        </span>
      )}
      {gitMark && (
        <span className={`tree-git tree-git--${gitMark}`} data-testid="tree-git-mark" title={markTitles[gitMark]}>
          {gitMark}
        </span>
      )}
      {changesInside > 0 && (
        <span className="tree-git-dot" data-testid="tree-git-dot" title={`${changesInside} changed file${changesInside === 1 ? '' : 's'} inside`} />
      )}
    </div>
  );
});

function fileIconClass(name: string): string {
  const extension = name.slice(name.lastIndexOf('.') + 1).toLowerCase();
  if (extension === 'ts' || extension === 'tsx') return 'tree-icon--ts';
  if (extension === 'js' || extension === 'jsx' || extension === 'mjs') return 'tree-icon--js';
  if (extension === 'json') return 'tree-icon--json';
  if (extension === 'md') return 'tree-icon--md';
  if (extension === 'css' || extension === 'html') return 'tree-icon--web';
  return '';
}
