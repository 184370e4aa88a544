import { create } from 'zustand';
import { displayChord, effectiveKeybindings, type BoundCommandId } from '../commands/keybindings';
import { clampFontSize, defaultSettings, loadSettings, saveSettings, type ThemeChoice, type UserSettings } from '../memory/userSettings';

/** The theme drawn on screen: a choice of "system" resolves to dark or light by prefers-color-scheme. */
export type SettingsSection = 'editor' | 'theme' | 'keys';

export type AppliedTheme = 'dark' | 'light' | 'high-contrast';

interface SettingsState extends UserSettings {
  /** The Settings view (Ctrl/Cmd+,) is open, with the keyboard at this section. */
  open: boolean;
  section: SettingsSection;
  /** Bumped at each open request, so asking again (another section) moves the keyboard there. */
  openRequest: number;
  /** What the system asks for (prefers-color-scheme), followed when theme is 'system'. */
  systemPrefersLight: boolean;
}

const systemQuery = typeof window !== 'undefined' && typeof window.matchMedia === 'function' ? window.matchMedia('(prefers-color-scheme: light)') : null;

export const useSettings = create<SettingsState>(() => ({
  ...(typeof localStorage !== 'undefined' ? loadSettings() : defaultSettings),
  open: false,
  section: 'editor',
  openRequest: 0,
  systemPrefersLight: systemQuery?.matches ?? false,
}));

export function appliedTheme(state: Pick<SettingsState, 'theme' | 'systemPrefersLight'>): AppliedTheme {
  if (state.theme === 'system') return state.systemPrefersLight ? 'light' : 'dark';
  return state.theme;
}

function update(change: Partial<UserSettings>): void {
  useSettings.setState(change);
  const { theme, fontSize, tabSize, wordWrap, minimap, keybindings } = useSettings.getState();
  saveSettings({ theme, fontSize, tabSize, wordWrap, minimap, keybindings });
}

export const setTheme = (theme: ThemeChoice) => update({ theme });
export const setFontSize = (fontSize: number) => update({ fontSize: clampFontSize(fontSize) });
export const changeFontSize = (delta: number) => setFontSize(useSettings.getState().fontSize + delta);
export const setTabSize = (tabSize: number) => update({ tabSize });
export const setWordWrap = (wordWrap: boolean) => update({ wordWrap });
export const toggleWordWrap = () => setWordWrap(!useSettings.getState().wordWrap);
export const setMinimap = (minimap: boolean) => update({ minimap });
export const toggleMinimap = () => setMinimap(!useSettings.getState().minimap);

/** Binds a command to a chord (null: no key); back to its default with resetKeybinding. */
export function setKeybinding(id: BoundCommandId, chord: string | null): void {
  update({ keybindings: { ...useSettings.getState().keybindings, [id]: chord } });
}

export function resetKeybinding(id: BoundCommandId): void {
  const { [id]: _dropped, ...rest } = useSettings.getState().keybindings;
  update({ keybindings: rest });
}

export function openSettings(section: SettingsSection = 'editor'): void {
  useSettings.setState({ open: true, section, openRequest: useSettings.getState().openRequest + 1 });
}

export function closeSettings(): void {
  useSettings.setState({ open: false });
}

/** The effective keys now (defaults with this person's changes). */
export function currentKeybindings(): Record<BoundCommandId, string | null> {
  return effectiveKeybindings(useSettings.getState().keybindings);
}

/** A command's key as tooltips spell it, or undefined when it has none. */
export function shortcutOf(id: BoundCommandId): string | undefined {
  const chord = currentKeybindings()[id];
  return chord === null ? undefined : displayChord(chord);
}

/** A command's key for a tooltip or a hint, re-rendered when the person changes it. */
export function useShortcut(id: BoundCommandId): string | undefined {
  const keybindings = useSettings((s) => s.keybindings);
  const chord = effectiveKeybindings(keybindings)[id];
  return chord === null ? undefined : displayChord(chord);
}

/** "New file (Alt+N)", or "New file" when the command has no key. */
export function withKey(text: string, key: string | undefined): string {
  return key === undefined ? text : `${text} (${key})`;
}

/**
 * Puts the theme on the page (data-theme on <html>, which styles.css reads) and keeps it there:
 * the person's choice, or the system's as it changes. Another tab of this browser changing the
 * settings changes them here too (the storage event).
 */
export function installTheme(root: HTMLElement = document.documentElement): () => void {
  const apply = () => {
    const theme = appliedTheme(useSettings.getState());
    root.dataset.theme = theme;
    root.style.colorScheme = theme === 'light' ? 'light' : 'dark';
  };
  apply();
  const unsubscribe = useSettings.subscribe((state, previous) => {
    if (state.theme !== previous.theme || state.systemPrefersLight !== previous.systemPrefersLight) apply();
  });
  const onSystem = (event: MediaQueryListEvent) => useSettings.setState({ systemPrefersLight: event.matches });
  systemQuery?.addEventListener('change', onSystem);
  const onStorage = (event: StorageEvent) => {
    if (event.key === 'flint.settings') useSettings.setState(loadSettings());
  };
  window.addEventListener('storage', onStorage);
  return () => {
    unsubscribe();
    systemQuery?.removeEventListener('change', onSystem);
    window.removeEventListener('storage', onStorage);
  };
}
