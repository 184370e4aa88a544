import { describe, expect, it } from 'vitest';
import { defaultSettings, loadSettings, saveSettings } from './userSettings';

function memoryStorage(initial: Record<string, string> = {}): Storage {
  const items = new Map<string, string>(Object.entries(initial));
  return {
    get length() {
      return items.size;
    },
    clear: () => items.clear(),
    getItem: (key) => items.get(key) ?? null,
    key: (index) => [...items.keys()][index] ?? null,
    removeItem: (key) => void items.delete(key),
    setItem: (key, value) => void items.set(key, String(value)),
  };
}

describe("a person's settings", () => {
  it('are the defaults the first time', () => {
    expect(loadSettings(memoryStorage())).toEqual(defaultSettings);
  });

  it('come back as saved', () => {
    const storage = memoryStorage();
    const settings = { theme: 'high-contrast' as const, fontSize: 17, tabSize: 4, wordWrap: true, minimap: true, keybindings: { sidebar: 'Mod+Shift+B', 'close-tab': null } };
    saveSettings(settings, storage);
    expect(loadSettings(storage)).toEqual(settings);
  });

  it('keep what is well formed of a damaged record, field by field', () => {
    const storage = memoryStorage({ 'flint.settings': JSON.stringify({ theme: 'solarized', fontSize: 400, tabSize: 'four', wordWrap: true, keybindings: { sidebar: 42, search: 'Mod+Shift+F', x: null } }) });
    expect(loadSettings(storage)).toEqual({ ...defaultSettings, fontSize: 32, wordWrap: true, keybindings: { search: 'Mod+Shift+F', x: null } });
    expect(loadSettings(memoryStorage({ 'flint.settings': '{not json' }))).toEqual(defaultSettings);
  });

  it('hold for the tab when the browser refuses to store them', () => {
    const full = memoryStorage();
    full.setItem = () => {
      throw new DOMException('quota', 'QuotaExceededError');
    };
    expect(() => saveSettings(defaultSettings, full)).not.toThrow();
  });
});
