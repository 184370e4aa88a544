import { baseName, parentPath } from '@flint/protocol';
import { useEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { gitMarkOf, gitStatusLabel, sortChanges } from '../project/gitMarks';
import { closeDiff, openDiff, refreshProject, selectChanges, selectGit, setChangesOpen, useProject } from '../stores/projectStore';
import { Icon } from './Icon';
import { useShortcut, withKey } from '../stores/settingsStore';

/**
 * What git sees changed since HEAD (Ctrl/Cmd-Shift-G): the branch and the changed files, in
 * the sidebar's place. A file opens as a diff against HEAD; Esc goes back to the editor.
 */
export function ChangesView() {
  const changesKey = useShortcut('changes');
  const branch = useProject((s) => selectGit(s)?.branch ?? null);
  const changes = useProject(selectChanges);
  const diffPath = useProject((s) => s.diff?.path ?? null);
  const focusRequest = useProject((s) => s.changesFocusRequest);
  const sorted = useMemo(() => sortChanges(changes), [changes]);
  const [cursor, setCursor] = useState<string | null>(null);
  const list = useRef<HTMLUListElement>(null);

  useEffect(() => {
    if (focusRequest > 0) list.current?.focus();
  }, [focusRequest]);
  useEffect(() => {
    if (diffPath !== null) setCursor(diffPath);
  }, [diffPath]);

  const onKeyDown = (event: KeyboardEvent) => {
    const index = sorted.findIndex((change) => change.path === cursor);
    const move = (to: number) => {
      const change = sorted[Math.max(0, Math.min(sorted.length - 1, to))];
      if (!change) return;
      setCursor(change.path);
      list.current?.querySelector(`[data-path="${CSS.escape(change.path)}"]`)?.scrollIntoView({ block: 'nearest' });
    };
    if (event.key === 'ArrowDown') move(index + 1);
    else if (event.key === 'ArrowUp') move(index === -1 ? sorted.length - 1 : index - 1);
    else if (event.key === 'Enter' && cursor !== null) openDiff(cursor, { focus: true });
    else if (event.key === 'Escape' && diffPath !== null) closeDiff({ focusEditor: true });
    else return;
    event.preventDefault();
  };

  return (
    <nav className="sidebar changes-view" aria-label="Changes" data-testid="changes-view">
      <div className="sidebar-header">
        <span className="sidebar-title">Changes</span>
        <span className="changes-branch" data-testid="changes-branch" title={branch === null ? 'HEAD is detached: no branch is checked out' : `On branch ${branch}`}>
          <Icon name="branch" /> {branch ?? 'detached HEAD'}
        </span>
        <span className="sidebar-actions">
          <button type="button" className="icon-button" data-testid="changes-refresh" title="Ask git again" aria-label="Refresh the changes" onClick={() => void refreshProject()}>
            <Icon name="refresh" />
          </button>
          <button type="button" className="icon-button" data-testid="changes-close" title={withKey('Back to the files', changesKey)} aria-label="Back to the files" onClick={() => setChangesOpen(false)}>
            <Icon name="back" />
          </button>
        </span>
      </div>
      <ul ref={list} className="changes-list" role="listbox" aria-label="Changed files" tabIndex={0} onKeyDown={onKeyDown}>
        {sorted.map(({ path, status }) => {
          const mark = gitMarkOf[status];
          const className = [
            'changes-item',
            `tree-row--git-${mark}`,
            path === diffPath && 'changes-item--open',
            path === cursor && 'changes-item--cursor',
          ]
            .filter(Boolean)
            .join(' ');
          return (
            <li
              key={path}
              className={className}
              data-testid="changes-item"
              data-path={path}
              data-status={status}
              role="option"
              aria-selected={path === diffPath}
              title={`${path} — ${gitStatusLabel[status]}`}
              onClick={() => {
                setCursor(path);
                openDiff(path);
              }}
            >
              <span className="changes-name">{baseName(path)}</span>
              <span className="changes-folder">{parentPath(path)}</span>
              <span className={`tree-git tree-git--${mark}`}>{mark}</span>
            </li>
          );
        })}
        {sorted.length === 0 && <li className="tree-empty">No changes since the last commit.</li>}
      </ul>
    </nav>
  );
}
