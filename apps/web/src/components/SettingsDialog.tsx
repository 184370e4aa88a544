import { useEffect, useMemo, useRef, useState, type KeyboardEvent as ReactKeyboardEvent } from 'react';
import {
  bindable,
  boundCommandIds,
  boundCommandTitles,
  chordOf,
  conflicts,
  defaultKeybindings,
  displayChord,
  effectiveKeybindings,
  type BoundCommandId,
} from '../commands/keybindings';
import { fontSizeRange, tabSizes, type ThemeChoice } from '../memory/userSettings';
import {
  closeSettings,
  resetKeybinding,
  setFontSize,
  setKeybinding,
  setMinimap,
  setTabSize,
  setTheme,
  setWordWrap,
  useSettings,
} from '../stores/settingsStore';
import { Icon } from './Icon';

/**
 * Settings (Ctrl/Cmd+,, or the palette's "Preferences: …"): theme, editor font size, tab size,
 * word wrap, minimap, and the app's keys, rebindable by pressing the new chord. Everything here
 * is this person's, kept in this browser (memory/userSettings.ts), never the workspace's.
 */
export function SettingsDialog() {
  const open = useSettings((s) => s.open);
  return open ? <SettingsPanel /> : null;
}

function SettingsPanel() {
  const settings = useSettings();
  const themeField = useRef<HTMLSelectElement>(null);
  const fontField = useRef<HTMLInputElement>(null);
  const filterField = useRef<HTMLInputElement>(null);
  const [fontText, setFontText] = useState(String(settings.fontSize));

  useEffect(() => {
    const previous = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    return () => previous?.focus();
  }, []);
  useEffect(() => {
    const field = settings.section === 'keys' ? filterField.current : settings.section === 'theme' ? themeField.current : fontField.current;
    field?.focus();
  }, [settings.openRequest, settings.section]);
  // Ctrl+= and the zoom change the size while the dialog is open: the field follows.
  useEffect(() => setFontText(String(settings.fontSize)), [settings.fontSize]);
  useEffect(() => {
    const onKeyDown = (event: KeyboardEvent) => event.key === 'Escape' && !event.defaultPrevented && closeSettings();
    window.addEventListener('keydown', onKeyDown);
    return () => window.removeEventListener('keydown', onKeyDown);
  }, []);

  const systemName = settings.systemPrefersLight ? 'light' : 'dark';
  const themeOptions: Array<[ThemeChoice, string]> = [
    ['system', `Follow the system (now ${systemName})`],
    ['dark', 'Dark'],
    ['light', 'Light'],
    ['high-contrast', 'High contrast'],
  ];
  const keyHint = (id: BoundCommandId) => {
    const chord = effectiveKeybindings(settings.keybindings)[id];
    return chord === null ? null : displayChord(chord);
  };

  const commitFont = () => {
    const value = Number(fontText);
    if (fontText.trim() !== '' && Number.isFinite(value)) setFontSize(value);
    else setFontText(String(settings.fontSize));
  };

  return (
    <div className="modal-backdrop" onMouseDown={(event) => event.target === event.currentTarget && closeSettings()}>
      <div className="modal settings-dialog" role="dialog" aria-modal="true" aria-labelledby="settings-title" data-testid="settings-dialog">
        <header className="modal-header">
          <h2 id="settings-title">Settings</h2>
          <span className="muted settings-scope">Yours, kept in this browser; collaborators keep their own.</span>
          <button type="button" className="icon-button" aria-label="Close settings" title="Close (Esc)" onClick={closeSettings}>
            <Icon name="close" />
          </button>
        </header>
        <div className="settings-body">
          <section aria-labelledby="settings-editor-heading">
            <h3 id="settings-editor-heading" className="settings-heading">
              Appearance and editor
            </h3>
            <div className="settings-grid">
              <label htmlFor="settings-theme">Theme</label>
              <div className="settings-control">
                <select id="settings-theme" ref={themeField} data-testid="settings-theme" value={settings.theme} onChange={(event) => setTheme(event.target.value as ThemeChoice)}>
                  {themeOptions.map(([value, label]) => (
                    <option key={value} value={value}>
                      {label}
                    </option>
                  ))}
                </select>
              </div>
              <label htmlFor="settings-font-size">Font size</label>
              <div className="settings-control">
                <input
                  id="settings-font-size"
                  ref={fontField}
                  data-testid="settings-font-size"
                  type="number"
                  min={fontSizeRange.min}
                  max={fontSizeRange.max}
                  value={fontText}
                  onChange={(event) => {
                    setFontText(event.target.value);
                    const value = Number(event.target.value);
                    if (event.target.value.trim() !== '' && value >= fontSizeRange.min && value <= fontSizeRange.max) setFontSize(value);
                  }}
                  onBlur={commitFont}
                  onKeyDown={(event) => event.key === 'Enter' && commitFont()}
                />
                <span className="muted">
                  px · {keyHint('font-bigger') ?? '—'} / {keyHint('font-smaller') ?? '—'}
                </span>
              </div>
              <label htmlFor="settings-tab-size">Tab size</label>
              <div className="settings-control">
                <select id="settings-tab-size" data-testid="settings-tab-size" value={settings.tabSize} onChange={(event) => setTabSize(Number(event.target.value))}>
                  {(tabSizes.includes(settings.tabSize) ? tabSizes : [...tabSizes, settings.tabSize].sort((a, b) => a - b)).map((size) => (
                    <option key={size} value={size}>
                      {size} spaces
                    </option>
                  ))}
                </select>
              </div>
              <label htmlFor="settings-word-wrap">Word wrap</label>
              <div className="settings-control">
                <input id="settings-word-wrap" data-testid="settings-word-wrap" type="checkbox" checked={settings.wordWrap} onChange={(event) => setWordWrap(event.target.checked)} />
                {keyHint('word-wrap') && <kbd>{keyHint('word-wrap')}</kbd>}
              </div>
              <label htmlFor="settings-minimap">Minimap</label>
              <div className="settings-control">
                <input id="settings-minimap" data-testid="settings-minimap" type="checkbox" checked={settings.minimap} onChange={(event) => setMinimap(event.target.checked)} />
              </div>
            </div>
          </section>
          <KeyTable keybindings={settings.keybindings} filterField={filterField} />
        </div>
      </div>
    </div>
  );
}

function KeyTable({ keybindings, filterField }: { keybindings: Record<string, string | null>; filterField: React.RefObject<HTMLInputElement | null> }) {
  const [filter, setFilter] = useState('');
  const [recording, setRecording] = useState<BoundCommandId | null>(null);
  const [refused, setRefused] = useState<string | null>(null);
  const table = useMemo(() => effectiveKeybindings(keybindings), [keybindings]);
  const clashes = useMemo(() => conflicts(table), [table]);
  const changeButtons = useRef(new Map<BoundCommandId, HTMLButtonElement>());
  const text = filter.trim().toLowerCase();
  const rows = boundCommandIds.filter((id) => {
    if (!text) return true;
    const chord = table[id];
    return boundCommandTitles[id].toLowerCase().includes(text) || (chord !== null && displayChord(chord).toLowerCase().includes(text));
  });

  const stopRecording = (id: BoundCommandId) => {
    setRecording(null);
    setRefused(null);
    queueMicrotask(() => changeButtons.current.get(id)?.focus());
  };
  const onRecorderKey = (id: BoundCommandId, event: ReactKeyboardEvent<HTMLButtonElement>) => {
    event.preventDefault();
    event.stopPropagation();
    const chord = chordOf(event.nativeEvent);
    if (event.key === 'Escape' && chord === 'Escape') return stopRecording(id);
    if (chord === null) return; // only modifiers so far
    if (!bindable(chord)) {
      setRefused(`${displayChord(chord)} is typing; use Ctrl, Alt or a function key.`);
      return;
    }
    setKeybinding(id, chord);
    stopRecording(id);
  };

  return (
    <section aria-labelledby="settings-keys-heading">
      <div className="settings-keys-header">
        <h3 id="settings-keys-heading" className="settings-heading">
          Keyboard shortcuts
        </h3>
        <input
          ref={filterField}
          className="settings-filter"
          data-testid="settings-keys-filter"
          aria-label="Filter the shortcuts"
          placeholder="Filter by command or key"
          value={filter}
          spellCheck={false}
          onChange={(event) => setFilter(event.target.value)}
        />
      </div>
      <table className="keys-table" data-testid="keys-table">
        <thead>
          <tr>
            <th scope="col">Command</th>
            <th scope="col">Key</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((id) => {
            const chord = table[id];
            const clash = chord === null ? undefined : clashes.get(chord)?.filter((other) => other !== id);
            const changed = keybindings[id] !== undefined;
            return (
              <tr key={id} data-testid="key-row" data-command={id}>
                <td>{boundCommandTitles[id]}</td>
                <td className="keys-table-key">
                  {recording === id ? (
                    <button
                      type="button"
                      autoFocus
                      data-key-recorder
                      className="key-recorder"
                      data-testid="key-recorder"
                      aria-label={`Press the new key for ${boundCommandTitles[id]}; Escape cancels`}
                      onKeyDown={(event) => onRecorderKey(id, event)}
                      onBlur={() => {
                        setRecording(null);
                        setRefused(null);
                      }}
                    >
                      {refused ?? 'Press the keys… (Esc cancels)'}
                    </button>
                  ) : chord === null ? (
                    <span className="muted">none</span>
                  ) : (
                    <kbd data-testid="key-chord">{displayChord(chord)}</kbd>
                  )}
                  {clash && clash.length > 0 && (
                    <span className="key-conflict" data-testid="key-conflict" role="note">
                      also {clash.map((other) => boundCommandTitles[other]).join(', ')}
                    </span>
                  )}
                </td>
                <td className="keys-table-actions">
                  <button
                    type="button"
                    className="button button--small"
                    data-testid="key-change"
                    aria-label={`Change the key of ${boundCommandTitles[id]}`}
                    ref={(element) => {
                      if (element) changeButtons.current.set(id, element);
                      else changeButtons.current.delete(id);
                    }}
                    onClick={() => {
                      setRefused(null);
                      setRecording(id);
                    }}
                  >
                    Change
                  </button>
                  {chord !== null && (
                    <button type="button" className="button button--small" data-testid="key-remove" aria-label={`Remove the key of ${boundCommandTitles[id]}`} onClick={() => setKeybinding(id, null)}>
                      Remove
                    </button>
                  )}
                  {changed && (
                    <button
                      type="button"
                      className="button button--small"
                      data-testid="key-reset"
                      aria-label={`Reset ${boundCommandTitles[id]} to ${defaultLabel(id)}`}
                      title={`Back to ${defaultLabel(id)}`}
                      onClick={() => resetKeybinding(id)}
                    >
                      Reset
                    </button>
                  )}
                </td>
              </tr>
            );
          })}
          {rows.length === 0 && (
            <tr>
              <td colSpan={3} className="muted">
                No command or key matches.
              </td>
            </tr>
          )}
        </tbody>
      </table>
      <p className="muted settings-note">
        The editor's own keys (F1 lists them) and the agent's ({displayChord('Mod+K')} inline edit, {displayChord('Mod+Enter')} accept all) follow VS Code and stay as they are.
      </p>
    </section>
  );
}

/** A command's default key as a tooltip spells it, or "no key" for one that has none by default. */
function defaultLabel(id: BoundCommandId): string {
  const chord: string | null = defaultKeybindings[id];
  return chord === null ? 'no key' : displayChord(chord);
}
