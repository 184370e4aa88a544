/**
 * One person's preferences, kept in this browser's localStorage and never sent to the gateway:
 * collaborators in the same workspace each keep their own theme, font size and keys.
 */
export type ThemeChoice = 'system' | 'dark' | 'light' | 'high-contrast';
export const themeChoices: ThemeChoice[] = ['system', 'dark', 'light', 'high-contrast'];

export interface UserSettings {
  theme: ThemeChoice;
  /** The editor's font size in px; the line height follows it. */
  fontSize: number;
  tabSize: number;
  wordWrap: boolean;
  minimap: boolean;
  /**
   * Keys the person changed, by command id: a chord ("Mod+Shift+P", see keybindings.ts) or null
   * for "no key". Commands not named here keep their default key.
   */
  keybindings: Record<string, string | null>;
}

export const defaultSettings: UserSettings = { theme: 'system', fontSize: 13, tabSize: 2, wordWrap: false, minimap: false, keybindings: {} };
export const fontSizeRange = { min: 8, max: 32 };
export const tabSizes = [2, 4, 8];

const storageKey = 'flint.settings';

const clampInt = (value: unknown, min: number, max: number): number | null =>
  typeof value === 'number' && Number.isFinite(value) ? Math.min(max, Math.max(min, Math.round(value))) : null;

function readStored(storage: Storage): Partial<Record<keyof UserSettings, unknown>> | null {
  try {
    return JSON.parse(storage.getItem(storageKey) ?? 'null') as Partial<Record<keyof UserSettings, unknown>> | null;
  } catch {
    // Unreadable: every field takes its default.
    return null;
  }
}

/** Reads the stored settings; anything missing or malformed falls back to its default, field by field. */
export function loadSettings(storage: Storage = localStorage): UserSettings {
  const parsed = readStored(storage);
  if (!parsed || typeof parsed !== 'object') return { ...defaultSettings, keybindings: {} };
  const keybindings: Record<string, string | null> = {};
  if (parsed.keybindings && typeof parsed.keybindings === 'object' && !Array.isArray(parsed.keybindings)) {
    for (const [id, chord] of Object.entries(parsed.keybindings as Record<string, unknown>)) {
      if (chord === null || (typeof chord === 'string' && chord.length > 0 && chord.length <= 40)) keybindings[id] = chord;
    }
  }
  return {
    theme: themeChoices.includes(parsed.theme as ThemeChoice) ? (parsed.theme as ThemeChoice) : defaultSettings.theme,
    fontSize: clampInt(parsed.fontSize, fontSizeRange.min, fontSizeRange.max) ?? defaultSettings.fontSize,
    tabSize: clampInt(parsed.tabSize, 1, 16) ?? defaultSettings.tabSize,
    wordWrap: typeof parsed.wordWrap === 'boolean' ? parsed.wordWrap : defaultSettings.wordWrap,
    minimap: typeof parsed.minimap === 'boolean' ? parsed.minimap : defaultSettings.minimap,
    keybindings,
  };
}

export function saveSettings(settings: UserSettings, storage: Storage = localStorage): void {
  try {
    storage.setItem(storageKey, JSON.stringify(settings));
  } catch (error) {
    // Private mode or a full quota: the settings hold for this tab only.
    console.warn('Flint: could not keep the settings in this browser', error);
  }
}

/** Clamps a font size into the range the editor accepts. */
export function clampFontSize(size: number): number {
  return Math.min(fontSizeRange.max, Math.max(fontSizeRange.min, Math.round(size)));
}
