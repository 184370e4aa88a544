import { parentPath } from '@flint/protocol';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useCallback, useEffect, useMemo, useRef, useState, type DragEvent, type KeyboardEvent } from 'react';
import { buildTree, initiallyCollapsed, visibleRows, type TreeNode } from '../fileTree/buildTree';
import { droppedRoots, isFileDrag } from '../project/droppedFiles';
import { selectCanEdit, useConnection } from '../stores/connectionStore';
import { usePalette } from '../stores/paletteStore';
import { usePresence } from '../stores/presenceStore';
import { useProject } from '../stores/projectStore';
import { downloadZip, uploadDropped, uploadPicked } from '../stores/projectTransfers';
import {
  createEntry,
  deleteEntry,
  moveEntry,
  openFile,
  renameEntry,
  selectActivePath,
  useWorkspace,
} from '../stores/workspaceStore';
import { Icon } from './Icon';
import { TreeNameInput } from './TreeNameInput';
import { TreeRow } from './TreeRow';
import { UploadButton } from './UploadButton';
import { useShortcut, withKey } from '../stores/settingsStore';

type Editing = { mode: 'create'; kind: 'file' | 'folder'; parent: string } | { mode: 'rename'; node: TreeNode };

const dragType = 'application/x-flint-path';
/** A tree row's height (styles.css .tree-row); a name being typed may be taller, and is measured. */
const rowHeight = 24;
const noColors: readonly string[] = [];

function join(folder: string, name: string): string {
  return folder === '' ? name : `${folder}/${name}`;
}

/** Where a drag would land: a move of a row, or an upload of files from the desktop. */
type DropTarget = { folder: string; kind: 'move' | 'upload' };

/**
 * The workspace's files: create, rename (F2, double-click), delete, drag onto folders to move,
 * drop files or folders from the desktop to upload, download folders as zips; git's marks.
 */
export function FileTree({ hidden = false }: { hidden?: boolean }) {
  const newFileKey = useShortcut('new-file');
  const newFolderKey = useShortcut('new-folder');
  const entries = useWorkspace((s) => s.entries);
  const indexSynced = useWorkspace((s) => s.indexSynced);
  const activePath = useWorkspace(selectActivePath);
  const tabs = useWorkspace((s) => s.tabs);
  const pathById = useWorkspace((s) => s.pathById);
  const createRequest = useWorkspace((s) => s.createRequest);
  const canEdit = useConnection(selectCanEdit);
  const closed = useConnection((s) => s.status.kind === 'closed');
  const peers = usePresence((s) => s.peers);
  const marks = useProject((s) => s.marks);

  const tree = useMemo(() => buildTree(entries), [entries]);
  /** Files in the index: the tree says how many it holds (B12's probe reads it; rows in view are fewer). */
  const fileCount = useMemo(() => {
    let count = 0;
    for (const entry of entries.values()) if (entry.kind === 'file') count++;
    return count;
  }, [entries]);
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(() => new Set());
  // A large tree starts collapsed but for the folders of the open tabs (issue 36); a small one open.
  const [startedCollapsed, setStartedCollapsed] = useState(false);
  useEffect(() => {
    if (startedCollapsed || !indexSynced) return;
    const open = tabs.map((id) => pathById.get(id)).filter((path): path is string => path !== undefined);
    setCollapsed(initiallyCollapsed(tree, open));
    setStartedCollapsed(true);
    // Once, when the index first synced: later changes keep what the reader opened and closed.
  }, [indexSynced, tree]);
  const rows = useMemo(() => visibleRows(tree, collapsed), [tree, collapsed]);
  const [selected, setSelected] = useState<string | null>(null);
  const [editing, setEditing] = useState<Editing | null>(null);
  const [dropTarget, setDropTarget] = useState<DropTarget | null>(null);
  const dragged = useRef<string | null>(null);
  const treeRef = useRef<HTMLDivElement>(null);

  const peerColors = useMemo(() => {
    const byPath = new Map<string, string[]>();
    for (const peer of peers) {
      if (peer.activeFile === null) continue;
      byPath.set(peer.activeFile, [...(byPath.get(peer.activeFile) ?? []), peer.user.color]);
    }
    return byPath;
  }, [peers]);

  const expand = useCallback((folder: string) => {
    setCollapsed((current) => {
      let next: Set<string> | null = null;
      for (let path = folder; path !== ''; path = parentPath(path)) {
        if (!current.has(path)) continue;
        next ??= new Set(current);
        next.delete(path);
      }
      return next ?? current;
    });
  }, []);

  // A tab's "Reveal in Explorer": open the folders down to it, select it, give the tree the keyboard.
  const revealRequest = usePalette((s) => s.treeRevealRequest);
  useEffect(() => {
    if (!revealRequest) return;
    expand(parentPath(revealRequest.path));
    setSelected(revealRequest.path);
    const frame = requestAnimationFrame(() => {
      treeRef.current?.querySelector(`[data-path="${CSS.escape(revealRequest.path)}"]`)?.scrollIntoView({ block: 'center' });
      treeRef.current?.focus();
    });
    return () => cancelAnimationFrame(frame);
  }, [revealRequest, expand]);
  useEffect(() => {
    if (activePath === null) return;
    setSelected(activePath);
    // The file a tab shows is in view in the tree (quick open of a file in a collapsed folder).
    expand(parentPath(activePath));
  }, [activePath, expand]);

  /** The folder of the selected row: where new entries and uploads go. */
  const selectedFolder = useCallback(() => {
    const node = rows.find((row) => row.node.path === selected)?.node;
    return !node ? '' : node.kind === 'folder' ? node.path : parentPath(node.path);
  }, [rows, selected]);

  const startCreate = useCallback(
    (kind: 'file' | 'folder') => {
      if (!canEdit) return;
      const parent = selectedFolder();
      expand(parent);
      setEditing({ mode: 'create', kind, parent });
    },
    [canEdit, selectedFolder, expand],
  );

  useEffect(() => {
    if (createRequest) startCreate(createRequest.kind);
    // Only a new request starts naming; startCreate changes with every selection.
  }, [createRequest]);

  const toggle = useCallback((path: string) => {
    setCollapsed((current) => {
      const next = new Set(current);
      if (!next.delete(path)) next.add(path);
      return next;
    });
  }, []);

  const onClick = useCallback(
    (node: TreeNode) => {
      setSelected(node.path);
      if (node.kind === 'file') openFile(node.path);
      else toggle(node.path);
    },
    [toggle],
  );

  const onRename = useCallback((node: TreeNode) => setEditing({ mode: 'rename', node }), []);

  const onDownload = useCallback((node: TreeNode) => void downloadZip(node.path), []);

  const onDelete = useCallback((node: TreeNode) => {
    const what = node.kind === 'folder' ? `the folder "${node.path}" and everything in it` : `"${node.path}"`;
    if (window.confirm(`Delete ${what}? This cannot be undone.`)) void deleteEntry(node.path);
  }, []);

  const onDragStart = useCallback((node: TreeNode, event: DragEvent) => {
    dragged.current = node.path;
    event.dataTransfer.setData(dragType, node.path);
    event.dataTransfer.effectAllowed = 'move';
  }, []);

  /** Dropping on a file moves into that file's folder; on a folder, into the folder. */
  const folderOf = (node: TreeNode | null) => (node === null ? '' : node.kind === 'folder' ? node.path : parentPath(node.path));

  const onDragOver = useCallback(
    (node: TreeNode | null, event: DragEvent) => {
      const move = dragged.current !== null && event.dataTransfer.types.includes(dragType);
      if (!move && !isFileDrag(event.dataTransfer)) return;
      // Taken even when refused: a file dropped where nobody takes it would replace the IDE with it.
      event.preventDefault();
      event.stopPropagation();
      if (!move && !canEdit) {
        event.dataTransfer.dropEffect = 'none';
        return;
      }
      event.dataTransfer.dropEffect = move ? 'move' : 'copy';
      const folder = folderOf(node);
      const kind = move ? 'move' : 'upload';
      setDropTarget((current) => (current?.folder === folder && current.kind === kind ? current : { folder, kind }));
    },
    [canEdit],
  );

  const onDrop = useCallback(
    (node: TreeNode | null, event: DragEvent) => {
      const from = event.dataTransfer.getData(dragType) || dragged.current;
      event.preventDefault();
      event.stopPropagation();
      dragged.current = null;
      setDropTarget(null);
      const folder = folderOf(node);
      if (!from && isFileDrag(event.dataTransfer)) {
        if (!canEdit) return;
        expand(folder);
        void uploadDropped(folder, droppedRoots(event.dataTransfer));
        return;
      }
      if (!from) return;
      expand(folder);
      void moveEntry(from, folder);
    },
    [expand, canEdit],
  );

  const commitCreate = (parent: string, kind: 'file' | 'folder') => async (name: string) => {
    const error = await createEntry(join(parent, name), kind);
    if (error === null) {
      setEditing(null);
      setSelected(join(parent, name));
      // A new file is for typing into (createEntry focused the editor); a folder, for more files.
      if (kind === 'folder') treeRef.current?.focus();
    }
    return error;
  };

  const commitRename = (node: TreeNode) => async (name: string) => {
    const to = join(parentPath(node.path), name);
    const error = await renameEntry(node.path, to);
    if (error === null) {
      setEditing(null);
      setSelected(to);
      treeRef.current?.focus();
    }
    return error;
  };

  const cancel = () => {
    setEditing(null);
    treeRef.current?.focus();
  };

  /** What the list shows: the visible rows, and a name being typed under its folder (or at the top). */
  type Item = { kind: 'row'; row: (typeof rows)[number] } | { kind: 'create'; parent: string; depth: number };
  const items = useMemo(() => {
    const creating = editing?.mode === 'create' ? editing.parent : null;
    const out: Item[] = [];
    if (creating === '') out.push({ kind: 'create', parent: '', depth: 0 });
    for (const row of rows) {
      out.push({ kind: 'row', row });
      if (creating !== null && creating !== '' && row.node.kind === 'folder' && row.node.path === creating) out.push({ kind: 'create', parent: creating, depth: row.depth + 1 });
    }
    return out;
  }, [rows, editing]);
  // Only the rows in view are in the page: a 5,000-file tree is thousands of rows (issue 36).
  const virtualizer = useVirtualizer({
    count: items.length,
    getScrollElement: () => treeRef.current,
    estimateSize: () => rowHeight,
    getItemKey: (index) => {
      const item = items[index]!;
      return item.kind === 'row' ? item.row.node.path : `create:${item.parent}`;
    },
    overscan: 12,
  });

  // A newly active file (a tab, quick open) is scrolled into view once its folders are open.
  const revealed = useRef<string | null>(null);
  useEffect(() => {
    // Not before the tree took its first shape: an index into the rows before would be stale.
    if (!startedCollapsed || activePath === null || revealed.current === activePath) return;
    const at = items.findIndex((item) => item.kind === 'row' && item.row.node.path === activePath);
    if (at === -1) return;
    revealed.current = activePath;
    virtualizer.scrollToIndex(at, { align: 'auto' });
  }, [activePath, items, virtualizer, startedCollapsed]);

  const onKeyDown = (event: KeyboardEvent) => {
    const index = rows.findIndex((row) => row.node.path === selected);
    const node = rows[index]?.node;
    const select = (to: number) => {
      const row = rows[Math.max(0, Math.min(rows.length - 1, to))];
      if (!row) return;
      setSelected(row.node.path);
      const at = items.findIndex((item) => item.kind === 'row' && item.row.node.path === row.node.path);
      if (at !== -1) virtualizer.scrollToIndex(at, { align: 'auto' });
    };
    const isFolder = node?.kind === 'folder';
    const isOpen = node !== undefined && !collapsed.has(node.path);
    let action: (() => void) | null = null;
    switch (event.key) {
      case 'ArrowDown':
        action = () => select(index + 1);
        break;
      case 'ArrowUp':
        action = () => select(index === -1 ? rows.length - 1 : index - 1);
        break;
      case 'ArrowRight':
        if (node && isFolder && !isOpen) action = () => toggle(node.path);
        break;
      case 'ArrowLeft':
        if (node && isFolder && isOpen) action = () => toggle(node.path);
        else if (node && parentPath(node.path) !== '') action = () => setSelected(parentPath(node.path));
        break;
      case 'Enter':
        if (node?.kind === 'file') action = () => openFile(node.path, { focus: true });
        else if (node) action = () => toggle(node.path);
        break;
      case 'F2':
        if (node && canEdit) action = () => onRename(node);
        break;
      case 'Delete':
        if (node && canEdit) action = () => onDelete(node);
        break;
    }
    if (action === null) return;
    event.preventDefault();
    action();
  };

  const createInput = (parent: string, depth: number) =>
    editing?.mode === 'create' && editing.parent === parent ? (
      <TreeNameInput
        key={`create:${parent}`}
        initial=""
        depth={depth}
        kind={editing.kind}
        onCommit={commitCreate(parent, editing.kind)}
        onCancel={cancel}
      />
    ) : null;

  return (
    <nav className="sidebar" aria-label="Files" hidden={hidden}>
      <div className="sidebar-header">
        <span className="sidebar-title">Files</span>
        <span className="sidebar-actions">
          {canEdit && (
            <>
              <button type="button" className="icon-button" data-testid="new-file-button" title={withKey('New file', newFileKey)} aria-label="New file" onClick={() => startCreate('file')}>
                <Icon name="newFile" />
              </button>
              <button type="button" className="icon-button" data-testid="new-folder-button" title={withKey('New folder', newFolderKey)} aria-label="New folder" onClick={() => startCreate('folder')}>
                <Icon name="newFolder" />
              </button>
              <UploadButton
              onPick={(files) => {
                const folder = selectedFolder();
                expand(folder);
                void uploadPicked(folder, files);
              }}
            />
            </>
          )}
          <button type="button" className="icon-button" data-testid="download-workspace-button" title="Download the workspace as zip" aria-label="Download the workspace as zip" onClick={() => void downloadZip('')}>
            <Icon name="download" />
          </button>
        </span>
      </div>
      <div
        ref={treeRef}
        className={dropTarget?.folder === '' ? 'tree tree--drop' : 'tree'}
        data-testid="file-tree"
        data-files={fileCount}
        role="tree"
        tabIndex={0}
        onKeyDown={onKeyDown}
        onDragOver={(event) => onDragOver(null, event)}
        onDragLeave={(event) => {
          if (!event.currentTarget.contains(event.relatedTarget as Node | null)) setDropTarget(null);
        }}
        onDrop={(event) => onDrop(null, event)}
        onDragEnd={() => {
          dragged.current = null;
          setDropTarget(null);
        }}
      >
        <div className="tree-rows" style={{ height: virtualizer.getTotalSize() }}>
          {virtualizer.getVirtualItems().map((virtual) => {
            const item = items[virtual.index]!;
            let content;
            if (item.kind === 'create') content = createInput(item.parent, item.depth);
            else {
              const { node, depth } = item.row;
              content =
                editing?.mode === 'rename' && editing.node.path === node.path ? (
                  <TreeNameInput key={`rename:${node.path}`} initial={node.name} depth={depth} kind={node.kind} onCommit={commitRename(node)} onCancel={cancel} />
                ) : (
                  <TreeRow
                    node={node}
                    depth={depth}
                    active={node.path === activePath}
                    selected={node.path === selected}
                    expanded={!collapsed.has(node.path)}
                    dropTarget={node.kind === 'folder' && dropTarget?.folder === node.path}
                    canEdit={canEdit}
                    peerColors={peerColors.get(node.path) ?? noColors}
                    gitMark={node.kind === 'file' ? (marks.files.get(node.path) ?? null) : null}
                    changesInside={node.kind === 'folder' ? (marks.folders.get(node.path) ?? 0) : 0}
                    onClick={onClick}
                    onRename={onRename}
                    onDelete={onDelete}
                    onDownload={onDownload}
                    onDragStart={onDragStart}
                    onDragOver={onDragOver}
                    onDrop={onDrop}
                  />
                );
            }
            return (
              <div key={virtual.key} data-index={virtual.index} ref={virtualizer.measureElement} className="tree-slot" style={{ transform: `translateY(${virtual.start}px)` }}>
                {content}
              </div>
            );
          })}
        </div>
        {indexSynced && rows.length === 0 && !editing && <div className="tree-empty">No files yet.{canEdit && newFileKey && ` Press ${newFileKey} to create one.`}</div>}
        {!indexSynced && !closed && <div className="tree-empty">Loading files…</div>}
      </div>
      {dropTarget?.kind === 'upload' && (
        <div className="tree-drop-hint" data-testid="upload-drop-hint">
          <Icon name="upload" />
          <span>Drop to upload into {dropTarget.folder === '' ? 'the workspace' : dropTarget.folder}</span>
        </div>
      )}
    </nav>
  );
}
