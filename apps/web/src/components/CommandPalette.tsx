import { useMemo, useState } from 'react';
import { appCommands, type AppCommand } from '../commands/appCommands';
import { shortcutOf } from '../stores/settingsStore';
import { fuzzyScore } from '../fileTree/fuzzyScore';
import { setPaletteOpen, usePalette } from '../stores/paletteStore';

/** Ctrl/Cmd+Shift+P (or the key the person gave it): the app's own commands, each with its key, filtered as you type. */
export function CommandPalette() {
  const open = usePalette((s) => s.open);

  return open ? <PalettePanel onClose={() => setPaletteOpen(false)} /> : null;
}

/** Best first: a title that contains the text, then the tightest in-order match. */
function rank(commands: AppCommand[], query: string): AppCommand[] {
  const text = query.trim();
  if (!text) return commands;
  const scored: Array<[AppCommand, number]> = [];
  for (const command of commands) {
    const score = fuzzyScore(command.title, text);
    if (score !== null) scored.push([command, score - (command.title.toLowerCase().includes(text.toLowerCase()) ? 1000 : 0)]);
  }
  return scored.sort((a, b) => a[1] - b[1]).map(([command]) => command);
}

function PalettePanel({ onClose }: { onClose(): void }) {
  // The list as things stand when it opens: who may edit, who is here, whether git is.
  const commands = useMemo(() => appCommands(), []);
  const [query, setQuery] = useState('');
  const [cursor, setCursor] = useState(0);
  const results = useMemo(() => rank(commands, query), [commands, query]);

  const run = (command: AppCommand | undefined) => {
    if (!command) return;
    onClose();
    // After the palette is gone, so a command that moves focus (the editor, a panel) keeps it.
    queueMicrotask(() => command.run());
  };

  return (
    <div className="modal-backdrop modal-backdrop--top" onMouseDown={(event) => event.target === event.currentTarget && onClose()}>
      <div className="quick-open command-palette" role="dialog" aria-label="Command palette" data-testid="command-palette">
        <input
          autoFocus
          className="quick-open-input"
          placeholder={`Type a command${shortcutOf('command-palette') ? ` (${shortcutOf('command-palette')})` : ''}; editor commands: F1`}
          aria-label="Command"
          aria-controls="command-palette-list"
          aria-activedescendant={results[cursor] ? `command-${results[cursor].id}` : undefined}
          role="combobox"
          aria-expanded="true"
          value={query}
          spellCheck={false}
          onChange={(event) => {
            setQuery(event.target.value);
            setCursor(0);
          }}
          onBlur={onClose}
          onKeyDown={(event) => {
            if (event.key === 'Escape') onClose();
            else if (event.key === 'Enter') run(results[cursor]);
            else if (event.key === 'ArrowDown') setCursor((c) => Math.min(results.length - 1, c + 1));
            else if (event.key === 'ArrowUp') setCursor((c) => Math.max(0, c - 1));
            else return;
            event.preventDefault();
            event.stopPropagation();
          }}
        />
        <ul className="quick-open-list" id="command-palette-list" role="listbox">
          {results.map((command, index) => (
            <li
              key={command.id}
              id={`command-${command.id}`}
              role="option"
              aria-selected={index === cursor}
              data-testid="palette-command"
              data-command={command.id}
              className={index === cursor ? 'quick-open-item quick-open-item--active' : 'quick-open-item'}
              onMouseDown={(event) => {
                event.preventDefault();
                run(command);
              }}
            >
              <span className="quick-open-name">{command.title}</span>
              {command.shortcut && <kbd className="palette-key">{command.shortcut}</kbd>}
            </li>
          ))}
          {results.length === 0 && <li className="quick-open-item muted">No matching commands.</li>}
        </ul>
      </div>
    </div>
  );
}
