import type { Ref } from 'react';
import { gitMarkOf, gitStatusLabel } from '../project/gitMarks';
import { closeDiff, useProject } from '../stores/projectStore';
import { Icon } from './Icon';

/**
 * The diff of a changed file against HEAD, over the editor. The Monaco diff editor inside `hostRef`
 * belongs to DiffController; this draws the header around it and says while HEAD loads.
 */
export function DiffPane({ hostRef }: { hostRef: Ref<HTMLDivElement> }) {
  const diff = useProject((s) => s.diff);
  const mark = diff?.status ? gitMarkOf[diff.status] : null;
  return (
    <div className="diff-pane" data-testid="diff-view" hidden={diff === null} aria-label={diff ? `Changes in ${diff.path}` : undefined}>
      {diff && (
        <div className="diff-header">
          {mark && (
            <span className={`tree-git tree-git--${mark}`} title={gitStatusLabel[diff.status!]}>
              {mark}
            </span>
          )}
          <span className="diff-path" data-testid="diff-path">
            {diff.path}
          </span>
          <span className="diff-sides muted">
            HEAD <span aria-hidden="true">↔</span> {diff.fileId === null ? 'deleted' : 'live'}
          </span>
          {diff.error && diff.head !== undefined && (
            <span className="diff-error" role="alert">
              {diff.error}
            </span>
          )}
          <button type="button" className="icon-button diff-close" data-testid="diff-close" title="Back to the editor (Esc)" aria-label="Close the diff" onClick={() => closeDiff({ focusEditor: true })}>
            <Icon name="close" />
          </button>
        </div>
      )}
      <div className="diff-body">
        <div ref={hostRef} className="diff-host" data-testid="diff-editor" />
        {diff !== null && diff.head === undefined && (
          <div className={diff.error ? 'diff-loading diff-loading--error' : 'diff-loading muted'} role={diff.error ? 'alert' : undefined}>
            {diff.error ?? `Reading ${diff.path} at HEAD…`}
          </div>
        )}
      </div>
    </div>
  );
}
