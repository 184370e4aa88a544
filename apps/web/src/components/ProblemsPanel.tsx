import { baseName } from '@flint/protocol';
import { useEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { closeProblems, useProblems, type Problem, type ProblemSeverity } from '../stores/problemsStore';
import { openFileAt, requestEditorFocus, useWorkspace } from '../stores/workspaceStore';
import { Icon } from './Icon';

const glyph: Record<ProblemSeverity, string> = { error: '⊗', warning: '⚠', info: 'ⓘ' };

type Row = { kind: 'file'; path: string; count: number } | { kind: 'problem'; path: string; problem: Problem };

/**
 * The Problems panel (Ctrl/Cmd+Shift+M), as in VS Code: the errors and warnings of the open
 * files, grouped by file. Arrow keys move, Enter or a click puts the caret on the problem.
 */
export function ProblemsPanel() {
  const open = useProblems((s) => s.open);
  const files = useProblems((s) => s.files);
  const errors = useProblems((s) => s.errors);
  const warnings = useProblems((s) => s.warnings);
  const focusRequest = useProblems((s) => s.focusRequest);
  const list = useRef<HTMLDivElement>(null);
  const [at, setAt] = useState(0);

  const rows = useMemo<Row[]>(
    () => files.flatMap((file) => [{ kind: 'file' as const, path: file.path, count: file.problems.length }, ...file.problems.map((problem) => ({ kind: 'problem' as const, path: file.path, problem }))]),
    [files],
  );
  const cursor = Math.min(at, Math.max(0, rows.length - 1));

  useEffect(() => {
    if (open && focusRequest > 0) list.current?.focus();
  }, [open, focusRequest]);

  if (!open) return null;

  const go = (row: Row | undefined) => {
    if (row?.kind !== 'problem') return;
    const entry = useWorkspace.getState().entries.get(row.path);
    if (entry?.kind === 'file') openFileAt(entry.fileId, row.problem.line, row.problem.column);
  };

  const onKeyDown = (event: KeyboardEvent) => {
    const move = (to: number) => {
      const next = Math.max(0, Math.min(rows.length - 1, to));
      setAt(next);
      list.current?.querySelector(`[data-row="${next}"]`)?.scrollIntoView({ block: 'nearest' });
    };
    if (event.key === 'ArrowDown') move(cursor + 1);
    else if (event.key === 'ArrowUp') move(cursor - 1);
    else if (event.key === 'Home') move(0);
    else if (event.key === 'End') move(rows.length - 1);
    else if (event.key === 'Enter') go(rows[cursor]);
    else if (event.key === 'Escape') requestEditorFocus();
    else return;
    event.preventDefault();
  };

  return (
    <section className="problems-panel" aria-label="Problems" data-testid="problems-panel">
      <header className="problems-header">
        <span className="problems-title">Problems</span>
        <span className="problems-counts" data-testid="problems-counts">
          {errors} {errors === 1 ? 'error' : 'errors'}, {warnings} {warnings === 1 ? 'warning' : 'warnings'}
        </span>
        <span className="top-spacer" />
        <button type="button" className="icon-button" aria-label="Close Problems" title="Close (Ctrl+Shift+M)" onClick={() => (closeProblems(), requestEditorFocus())}>
          <Icon name="close" />
        </button>
      </header>
      <div
        ref={list}
        className="problems-list"
        role="listbox"
        aria-label="Problems in the open files"
        tabIndex={0}
        aria-activedescendant={rows.length > 0 ? `problem-row-${cursor}` : undefined}
        onKeyDown={onKeyDown}
      >
        {rows.length === 0 && <p className="problems-empty muted">No problems in the open files.</p>}
        {rows.map((row, i) =>
          row.kind === 'file' ? (
            <div key={`f:${row.path}`} id={`problem-row-${i}`} data-row={i} role="option" aria-selected={i === cursor} className={i === cursor ? 'problems-file problems-row--cursor' : 'problems-file'} data-testid="problems-file" onClick={() => setAt(i)}>
              <span className="problems-file-name">{baseName(row.path)}</span>
              <span className="problems-file-folder">{row.path.slice(0, -baseName(row.path).length - 1)}</span>
              <span className="problems-file-count">{row.count}</span>
            </div>
          ) : (
            <div
              key={`p:${row.path}:${i}`}
              id={`problem-row-${i}`}
              data-row={i}
              role="option"
              aria-selected={i === cursor}
              className={`problems-item problems-item--${row.problem.severity}${i === cursor ? ' problems-row--cursor' : ''}`}
              data-testid="problems-item"
              onClick={() => {
                setAt(i);
                go(row);
              }}
            >
              <span className="problems-glyph" aria-label={row.problem.severity}>
                {glyph[row.problem.severity]}
              </span>
              <span className="problems-message">{row.problem.message}</span>
              {row.problem.source && <span className="problems-source">{row.problem.source}</span>}
              <span className="problems-where">
                [Ln {row.problem.line}, Col {row.problem.column}]
              </span>
            </div>
          ),
        )}
      </div>
    </section>
  );
}
