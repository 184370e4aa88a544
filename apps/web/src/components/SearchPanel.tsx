import type { SearchFileHits, SearchQuery } from '@flint/protocol';
import { baseName, parentPath } from '@flint/protocol';
import { useEffect, useRef, useState } from 'react';
import { selectCanEdit, useConnection } from '../stores/connectionStore';
import { closeSearch, replaceAll, searchNow, setReplacement, setSearchQuery, undoReplace, useSearch } from '../stores/searchStore';
import { openFileAt } from '../stores/workspaceStore';
import { Icon } from './Icon';

const mod = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform) ? '⌘' : 'Ctrl';

type Toggle = 'matchCase' | 'wholeWord' | 'regex';
const toggles: Array<{ key: Toggle; label: string; title: string; shortcut: string }> = [
  { key: 'matchCase', label: 'Aa', title: 'Match case', shortcut: 'Alt+C' },
  { key: 'wholeWord', label: 'ab', title: 'Match whole word', shortcut: 'Alt+W' },
  { key: 'regex', label: '.*', title: 'Use regular expression (RE2 syntax)', shortcut: 'Alt+R' },
];

/**
 * Search across files (Ctrl/Cmd+Shift+F), in the sidebar's place: the gateway searches every
 * file of the workspace, opened or not; results come grouped by file. Editors can replace all.
 */
export function SearchPanel() {
  const query = useSearch((s) => s.query);
  const replacement = useSearch((s) => s.replacement);
  const outcome = useSearch((s) => s.outcome);
  const running = useSearch((s) => s.running);
  const error = useSearch((s) => s.error);
  const replaced = useSearch((s) => s.replaced);
  const replacing = useSearch((s) => s.replacing);
  const focusRequest = useSearch((s) => s.focusRequest);
  const canEdit = useConnection(selectCanEdit);
  const input = useRef<HTMLInputElement>(null);

  useEffect(() => {
    input.current?.focus();
    input.current?.select();
  }, [focusRequest]);

  const onKeyDown = (event: React.KeyboardEvent) => {
    const toggle = event.altKey && !event.ctrlKey && !event.metaKey ? toggles.find((t) => `Key${t.shortcut.slice(-1)}` === event.code) : undefined;
    if (toggle) setSearchQuery({ [toggle.key]: !query[toggle.key] } as Partial<SearchQuery>);
    else if (event.key === 'Escape') closeSearch();
    else return;
    event.preventDefault();
    event.stopPropagation();
  };

  return (
    <nav className="sidebar search-panel" aria-label="Search" data-testid="search-panel" onKeyDown={onKeyDown}>
      <div className="sidebar-header">
        <span className="sidebar-title">Search</span>
        <span className="sidebar-actions">
          <button type="button" className="icon-button" data-testid="search-close" title="Back to the files (Esc)" aria-label="Back to the files" onClick={closeSearch}>
            <Icon name="back" />
          </button>
        </span>
      </div>
      <div className="search-fields">
        <div className="search-row">
          <input
            ref={input}
            className="search-input"
            data-testid="search-input"
            aria-label="Search"
            placeholder="Search"
            spellCheck={false}
            value={query.pattern}
            onChange={(event) => setSearchQuery({ pattern: event.target.value })}
            onKeyDown={(event) => {
              if (event.key === 'Enter') {
                event.preventDefault();
                searchNow();
              }
            }}
          />
          {toggles.map((t) => (
            <button
              key={t.key}
              type="button"
              className={`search-toggle${query[t.key] ? ' search-toggle--on' : ''}`}
              data-testid={`search-${t.key}`}
              aria-pressed={query[t.key]}
              aria-label={t.title}
              title={`${t.title} (${t.shortcut})`}
              onClick={() => setSearchQuery({ [t.key]: !query[t.key] } as Partial<SearchQuery>)}
            >
              {/* A glyph, not words (drawn by CSS): the name is the title's (axe: label-content-name-mismatch). */}
              <span className="search-toggle-glyph" aria-hidden="true" data-glyph={t.label} />
            </button>
          ))}
        </div>
        {canEdit && (
          <div className="search-row">
            <input
              className="search-input"
              data-testid="replace-input"
              aria-label="Replace"
              placeholder={query.regex ? 'Replace ($1 for a group)' : 'Replace'}
              spellCheck={false}
              value={replacement}
              onChange={(event) => setReplacement(event.target.value)}
              onKeyDown={(event) => {
                if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
                  event.preventDefault();
                  void replaceAll();
                }
              }}
            />
            <button
              type="button"
              className="button search-replace-all"
              data-testid="replace-all"
              title={`Replace every match shown, in every file (${mod}+Enter in the field)`}
              disabled={!outcome || outcome.total === 0 || replacing}
              onClick={() => void replaceAll()}
            >
              Replace all
            </button>
          </div>
        )}
        <input className="search-input search-glob" data-testid="search-include" aria-label="Files to include" placeholder="Files to include (e.g. src, *.ts)" spellCheck={false} value={query.include} onChange={(event) => setSearchQuery({ include: event.target.value })} />
        <input className="search-input search-glob" data-testid="search-exclude" aria-label="Files to exclude" placeholder="Files to exclude (e.g. **/*.test.ts)" spellCheck={false} value={query.exclude} onChange={(event) => setSearchQuery({ exclude: event.target.value })} />
      </div>
      <SearchSummary running={running} error={error} replaced={replaced} />
      {outcome && <SearchResults files={outcome.files} />}
    </nav>
  );
}

function SearchSummary({ running, error, replaced }: { running: boolean; error: string | null; replaced: string | null }) {
  const outcome = useSearch((s) => s.outcome);
  const pattern = useSearch((s) => s.query.pattern);
  const canUndo = useSearch((s) => s.canUndo);
  let text: string | null = null;
  if (error) text = error;
  else if (outcome && pattern) {
    const files = outcome.files.length;
    text = outcome.total === 0 ? 'No results.' : `${outcome.total} result${outcome.total === 1 ? '' : 's'} in ${files} file${files === 1 ? '' : 's'}`;
    if (outcome.total > outcome.shown) text += ` — showing the first ${outcome.shown}; narrow the search for the other ${outcome.total - outcome.shown}.`;
    if (outcome.stoppedAt) text += ` The search stopped at ${outcome.stoppedAt} (its budget ran out); narrow it with "files to include".`;
  }
  return (
    <div className={`search-summary${error ? ' search-summary--error' : ''}`} data-testid="search-summary" role="status" aria-busy={running}>
      {replaced && (
        <div className="search-replaced">
          <span data-testid="search-replaced">{replaced}</span>
          {canUndo && (
            <button type="button" className="link-button" data-testid="search-undo" title="Undo the replace in every file it changed" onClick={() => void undoReplace()}>
              Undo
            </button>
          )}
        </div>
      )}
      {running && !outcome ? 'Searching…' : text}
    </div>
  );
}

function SearchResults({ files }: { files: readonly SearchFileHits[] }) {
  const [folded, setFolded] = useState<ReadonlySet<string>>(new Set());
  const toggle = (path: string) =>
    setFolded((set) => {
      const next = new Set(set);
      if (!next.delete(path)) next.add(path);
      return next;
    });
  return (
    <ul className="search-results" data-testid="search-results" aria-label="Results by file">
      {files.map((file) => (
        <li key={file.fileId} className="search-file" data-testid="search-file" data-path={file.path}>
          <button type="button" className="search-file-header" aria-expanded={!folded.has(file.path)} onClick={() => toggle(file.path)} title={file.path}>
            <Icon name="chevron" className={folded.has(file.path) ? 'search-chevron' : 'search-chevron search-chevron--open'} />
            <span className="search-file-name">{baseName(file.path)}</span>
            <span className="search-file-folder muted">{parentPath(file.path)}</span>
            <span className="search-count">{file.matches.length}</span>
          </button>
          {!folded.has(file.path) && (
            <ul>
              {file.matches.map((match) => {
                const from = match.start - match.previewFrom;
                const to = Math.min(match.preview.length, match.end - match.previewFrom);
                return (
                  <li key={`${match.line}:${match.start}`}>
                    <button type="button" className="search-match" data-testid="search-match" title={`Line ${match.line + 1}`} onClick={() => openFileAt(file.fileId, match.line + 1)}>
                      <span className="search-line muted">{match.line + 1}</span>
                      <span className="search-preview">
                        {match.previewFrom > 0 && '…'}
                        {match.preview.slice(0, from).trimStart()}
                        <mark>{match.preview.slice(from, to)}</mark>
                        {match.preview.slice(to)}
                      </span>
                    </button>
                  </li>
                );
              })}
            </ul>
          )}
        </li>
      ))}
    </ul>
  );
}
