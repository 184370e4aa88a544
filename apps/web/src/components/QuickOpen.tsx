import { baseName, parentPath } from '@flint/protocol';
import { fuzzyScore } from '../fileTree/fuzzyScore';
import { useEffect, useMemo, useState } from 'react';
import { usePalette } from '../stores/paletteStore';
import { openFile, useWorkspace } from '../stores/workspaceStore';

/** Ctrl/Cmd+P: jump to a file by typing part of its path. */
export function QuickOpen() {
  const [open, setOpen] = useState(false);
  // Its key (Ctrl/Cmd+P unless rebound; boundCommands) toggles it; the palette's "Go to file…" opens it.
  const requested = usePalette((s) => s.quickOpenRequest);
  useEffect(() => {
    if (requested > 0) setOpen((value) => !value);
  }, [requested]);

  return open ? <QuickOpenPanel onClose={() => setOpen(false)} /> : null;
}

function QuickOpenPanel({ onClose }: { onClose(): void }) {
  const entries = useWorkspace((s) => s.entries);
  const [query, setQuery] = useState('');
  const [cursor, setCursor] = useState(0);

  const results = useMemo(() => {
    const scored: Array<[string, number]> = [];
    for (const [path, entry] of entries) {
      if (entry.kind !== 'file') continue;
      const value = fuzzyScore(path, query.trim());
      if (value !== null) scored.push([path, value]);
    }
    return scored.sort((a, b) => a[1] - b[1]).slice(0, 50).map(([path]) => path);
  }, [entries, query]);

  const choose = (path: string | undefined) => {
    if (path === undefined) return;
    onClose();
    openFile(path, { focus: true });
  };

  return (
    <div className="modal-backdrop modal-backdrop--top" onMouseDown={(event) => event.target === event.currentTarget && onClose()}>
      <div className="quick-open" role="dialog" aria-label="Go to file" data-testid="quick-open">
        <input
          autoFocus
          className="quick-open-input"
          placeholder="Go to file…"
          value={query}
          spellCheck={false}
          onChange={(event) => {
            setQuery(event.target.value);
            setCursor(0);
          }}
          onBlur={onClose}
          onKeyDown={(event) => {
            if (event.key === 'Escape') onClose();
            else if (event.key === 'Enter') choose(results[cursor]);
            else if (event.key === 'ArrowDown') setCursor((c) => Math.min(results.length - 1, c + 1));
            else if (event.key === 'ArrowUp') setCursor((c) => Math.max(0, c - 1));
            else return;
            event.preventDefault();
          }}
        />
        <ul className="quick-open-list" role="listbox">
          {results.map((path, index) => (
            <li
              key={path}
              role="option"
              aria-selected={index === cursor}
              className={index === cursor ? 'quick-open-item quick-open-item--active' : 'quick-open-item'}
              onMouseDown={(event) => {
                event.preventDefault();
                choose(path);
              }}
            >
              <span className="quick-open-name">{baseName(path)}</span>
              <span className="quick-open-path muted">{parentPath(path)}</span>
            </li>
          ))}
          {results.length === 0 && <li className="quick-open-item muted">No matching files.</li>}
        </ul>
      </div>
    </div>
  );
}
