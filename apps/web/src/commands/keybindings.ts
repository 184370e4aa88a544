/**
 * The app's own keys, as chords: "Mod+Shift+P", where Mod is Ctrl (⌘ on a Mac), the key named
 * by its place on the keyboard (KeyboardEvent.code), so Alt+N is the same chord on every layout
 * and with Alt's dead keys. Defaults follow VS Code where it has one; a person's changes
 * (UserSettings.keybindings) override them, and shortcuts, the palette, tooltips and F1 all read
 * the effective table.
 */

/** The commands that can have a key, and their default chords (null: none until a person gives one). */
export const defaultKeybindings = {
  'command-palette': 'Mod+Shift+P',
  'quick-open': 'Mod+P',
  search: 'Mod+Shift+F',
  sidebar: 'Mod+B',
  changes: 'Mod+Shift+G',
  'agent-panel': 'Mod+L',
  'new-file': 'Alt+N',
  'new-folder': 'Alt+Shift+N',
  'close-tab': 'Alt+W',
  settings: 'Mod+,',
  'word-wrap': 'Alt+Z',
  'font-bigger': 'Mod+=',
  'font-smaller': 'Mod+-',
  'font-reset': 'Mod+0',
  split: 'Mod+\\',
  'focus-group-1': 'Mod+1',
  'focus-group-2': 'Mod+2',
  'focus-group-3': 'Mod+3',
  'recent-tab': 'Mod+Tab',
  'recent-tab-back': 'Mod+Shift+Tab',
  'close-other-tabs': null,
  'close-all-tabs': null,
  problems: 'Mod+Shift+M',
  terminal: 'Mod+`',
} as const satisfies Record<string, string | null>;

export type BoundCommandId = keyof typeof defaultKeybindings;
export const boundCommandIds = Object.keys(defaultKeybindings) as BoundCommandId[];

/** What each bound command is called in the Settings list (the palette's titles can change with state). */
export const boundCommandTitles: Record<BoundCommandId, string> = {
  'command-palette': 'Show the command palette',
  'quick-open': 'Go to file…',
  search: 'Search across files',
  sidebar: 'Show or hide the sidebar',
  changes: 'Show changes since the last commit',
  'agent-panel': 'Open or close the agent panel',
  'new-file': 'New file',
  'new-folder': 'New folder',
  'close-tab': 'Close the tab',
  settings: 'Preferences: Open Settings',
  'word-wrap': 'View: Toggle Word Wrap',
  'font-bigger': 'Editor: Bigger font',
  'font-smaller': 'Editor: Smaller font',
  'font-reset': 'Editor: Default font size',
  split: 'Split the editor right',
  'focus-group-1': 'Go to editor group 1',
  'focus-group-2': 'Go to editor group 2',
  'focus-group-3': 'Go to editor group 3',
  'recent-tab': 'Switch to the tab used before (hold the modifier for the list)',
  'recent-tab-back': 'Switch to the tab used before, backwards',
  'close-other-tabs': 'Close the other tabs',
  'close-all-tabs': 'Close all the tabs of this group',
  problems: 'Show or hide Problems',
  terminal: 'Show or hide the terminal',
};

const codeNames: Record<string, string> = {
  Comma: ',',
  Period: '.',
  Slash: '/',
  Backslash: '\\',
  Semicolon: ';',
  Quote: "'",
  Backquote: '`',
  BracketLeft: '[',
  BracketRight: ']',
  Minus: '-',
  Equal: '=',
  NumpadAdd: '=',
  NumpadSubtract: '-',
  ArrowLeft: 'Left',
  ArrowRight: 'Right',
  ArrowUp: 'Up',
  ArrowDown: 'Down',
  Escape: 'Escape',
  Enter: 'Enter',
  Space: 'Space',
  Tab: 'Tab',
  Backspace: 'Backspace',
  Delete: 'Delete',
  Home: 'Home',
  End: 'End',
  PageUp: 'PageUp',
  PageDown: 'PageDown',
  Insert: 'Insert',
};

/** The key part of a chord for a KeyboardEvent.code, or null for a modifier or a key without a name here. */
export function keyOfCode(code: string): string | null {
  if (/^Key[A-Z]$/.test(code)) return code.slice(3);
  if (/^Digit[0-9]$/.test(code)) return code.slice(5);
  if (/^Numpad[0-9]$/.test(code)) return code.slice(6);
  if (/^F([1-9]|1[0-9])$/.test(code)) return code;
  return codeNames[code] ?? null;
}

export interface ChordEvent {
  code: string;
  ctrlKey: boolean;
  metaKey: boolean;
  altKey: boolean;
  shiftKey: boolean;
}

/** The chord a key press spells, or null while only modifiers are down. */
export function chordOf(event: ChordEvent): string | null {
  const key = keyOfCode(event.code);
  if (key === null) return null;
  const parts: string[] = [];
  if (event.ctrlKey || event.metaKey) parts.push('Mod');
  if (event.altKey) parts.push('Alt');
  if (event.shiftKey) parts.push('Shift');
  parts.push(key);
  return parts.join('+');
}

/**
 * A chord as typed or stored, in the one spelling chordOf gives ("ctrl+shift+p" and
 * "Shift+Mod+P" are "Mod+Shift+P"), or null if it is not one.
 */
export function normalizeChord(text: string): string | null {
  // The last part is the key, and may itself be "+" or "-"… only "=" and "-" are keys here.
  const parts = text.trim().split('+');
  let key = parts.pop() ?? '';
  if (key === '' && parts.length > 0 && parts[parts.length - 1] === '') {
    // "Mod++" is Mod and "=" (the same key).
    parts.pop();
    key = '=';
  }
  const mods = new Set(parts.map((part) => part.trim().toLowerCase()));
  for (const mod of mods) if (!['mod', 'ctrl', 'cmd', 'meta', '⌘', 'alt', 'option', '⌥', 'shift', '⇧'].includes(mod)) return null;
  const named = /^[a-z]$/i.test(key) ? key.toUpperCase() : /^f([1-9]|1[0-9])$/i.test(key) ? key.toUpperCase() : key;
  const valid = /^[A-Z0-9]$/.test(named) || /^F([1-9]|1[0-9])$/.test(named) || Object.values(codeNames).includes(named);
  if (!valid) return null;
  const out: string[] = [];
  if (['mod', 'ctrl', 'cmd', 'meta', '⌘'].some((m) => mods.has(m))) out.push('Mod');
  if (['alt', 'option', '⌥'].some((m) => mods.has(m))) out.push('Alt');
  if (['shift', '⇧'].some((m) => mods.has(m))) out.push('Shift');
  out.push(named);
  return out.join('+');
}

const isMac = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform);

/** A chord as this platform's tooltips spell it: "Ctrl+Shift+P", or "⌘+Shift+P" on a Mac. */
export function displayChord(chord: string, mac = isMac): string {
  return chord
    .split('+')
    .map((part, index, all) => (index === all.length - 1 ? part : part === 'Mod' ? (mac ? '⌘' : 'Ctrl') : part === 'Alt' && mac ? '⌥' : part))
    .join('+');
}

/**
 * Whether a chord can be a command's key: it needs Ctrl/⌘ or Alt, or to be a function key —
 * a plain letter or Shift+letter is typing, and Escape, Tab, Enter belong to the widgets.
 */
export function bindable(chord: string): boolean {
  const parts = chord.split('+');
  const key = parts[parts.length - 1] ?? '';
  if (/^F([1-9]|1[0-9])$/.test(key)) return true;
  return parts.includes('Mod') || parts.includes('Alt');
}

/** The effective chord of each command: a person's change, else the default; null for none. */
export function effectiveKeybindings(overrides: Record<string, string | null>): Record<BoundCommandId, string | null> {
  const table = {} as Record<BoundCommandId, string | null>;
  for (const id of boundCommandIds) {
    const override = overrides[id];
    const fallback: string | null = defaultKeybindings[id];
    table[id] = override === undefined ? fallback : override === null ? null : normalizeChord(override);
  }
  return table;
}

/** The command a chord runs (the first in the list when two share it), or null. */
export function commandForChord(table: Record<BoundCommandId, string | null>, chord: string): BoundCommandId | null {
  for (const id of boundCommandIds) if (table[id] === chord) return id;
  return null;
}

/** Chords held by more than one command, with the commands that hold them. */
export function conflicts(table: Record<BoundCommandId, string | null>): Map<string, BoundCommandId[]> {
  const byChord = new Map<string, BoundCommandId[]>();
  for (const id of boundCommandIds) {
    const chord = table[id];
    if (chord === null) continue;
    byChord.set(chord, [...(byChord.get(chord) ?? []), id]);
  }
  for (const [chord, ids] of byChord) if (ids.length < 2) byChord.delete(chord);
  return byChord;
}
