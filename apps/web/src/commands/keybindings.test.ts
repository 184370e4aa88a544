import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bindable, boundCommandIds, chordOf, commandForChord, conflicts, defaultKeybindings, displayChord, effectiveKeybindings, normalizeChord } from './keybindings';

const press = (code: string, mods: Partial<{ ctrlKey: boolean; metaKey: boolean; altKey: boolean; shiftKey: boolean }> = {}) => ({ code, ctrlKey: false, metaKey: false, altKey: false, shiftKey: false, ...mods });

describe('key chords', () => {
  it('spell a key press by its place on the keyboard, Ctrl and ⌘ alike', () => {
    expect(chordOf(press('KeyP', { ctrlKey: true, shiftKey: true }))).toBe('Mod+Shift+P');
    expect(chordOf(press('KeyP', { metaKey: true, shiftKey: true }))).toBe('Mod+Shift+P');
    expect(chordOf(press('KeyZ', { altKey: true }))).toBe('Alt+Z');
    expect(chordOf(press('Comma', { ctrlKey: true }))).toBe('Mod+,');
    expect(chordOf(press('Equal', { ctrlKey: true }))).toBe('Mod+=');
    expect(chordOf(press('F5'))).toBe('F5');
    expect(chordOf(press('ShiftLeft', { shiftKey: true }))).toBeNull();
    expect(chordOf(press('ControlLeft', { ctrlKey: true }))).toBeNull();
  });

  it('normalise what a person types into the one spelling, and refuse what is not a chord', () => {
    expect(normalizeChord('ctrl+shift+p')).toBe('Mod+Shift+P');
    expect(normalizeChord('Shift+Cmd+P')).toBe('Mod+Shift+P');
    expect(normalizeChord('alt+z')).toBe('Alt+Z');
    expect(normalizeChord('Mod++')).toBe('Mod+=');
    expect(normalizeChord('Hyper+P')).toBeNull();
    expect(normalizeChord('Ctrl+Banana')).toBeNull();
  });

  it('round-trip: every chord a key press spells normalises to itself', () => {
    const codes = ['KeyA', 'KeyQ', 'Digit3', 'F7', 'Comma', 'Equal', 'Minus', 'Backslash', 'BracketLeft', 'ArrowLeft', 'Enter', 'Space'];
    fc.assert(
      fc.property(fc.constantFrom(...codes), fc.boolean(), fc.boolean(), fc.boolean(), (code, ctrlKey, altKey, shiftKey) => {
        const chord = chordOf(press(code, { ctrlKey, altKey, shiftKey }))!;
        expect(normalizeChord(chord)).toBe(chord);
      }),
      { seed: 38, numRuns: 300 },
    );
  });

  it('show Ctrl on Linux and Windows, ⌘ and ⌥ on a Mac', () => {
    expect(displayChord('Mod+Shift+P', false)).toBe('Ctrl+Shift+P');
    expect(displayChord('Mod+Alt+P', true)).toBe('⌘+⌥+P');
    expect(displayChord('Mod+-', false)).toBe('Ctrl+-');
  });

  it('need Ctrl, Alt or a function key: a letter alone is typing', () => {
    expect(bindable('Shift+A')).toBe(false);
    expect(bindable('A')).toBe(false);
    expect(bindable('Alt+A')).toBe(true);
    expect(bindable('F6')).toBe(true);
  });
});

describe('the key table', () => {
  it('is the defaults until a person changes one; null takes the key away', () => {
    const table = effectiveKeybindings({ sidebar: 'Mod+Shift+B', 'close-tab': null });
    expect(table.sidebar).toBe('Mod+Shift+B');
    expect(table['close-tab']).toBeNull();
    expect(table.search).toBe(defaultKeybindings.search);
    expect(commandForChord(table, 'Mod+Shift+B')).toBe('sidebar');
    expect(commandForChord(table, 'Mod+B')).toBeNull();
    expect(commandForChord(table, 'Alt+W')).toBeNull();
  });

  it('has no conflicts by default, and names both commands when two share a key', () => {
    expect(conflicts(effectiveKeybindings({})).size).toBe(0);
    const table = effectiveKeybindings({ sidebar: defaultKeybindings.search });
    expect(conflicts(table).get(defaultKeybindings.search)).toEqual(['search', 'sidebar']);
    // The first in the list runs.
    expect(commandForChord(table, defaultKeybindings.search)).toBe(boundCommandIds.find((id) => id === 'search' || id === 'sidebar'));
  });

  it('holds the editor groups\' keys too: Ctrl+\\, Ctrl+1/2/3, Ctrl+Tab, Problems; Close Others/All have none until given one', () => {
    const table = effectiveKeybindings({});
    expect(commandForChord(table, chordOf({ code: 'Backslash', ctrlKey: true, metaKey: false, altKey: false, shiftKey: false })!)).toBe('split');
    expect(commandForChord(table, 'Mod+2')).toBe('focus-group-2');
    expect(commandForChord(table, chordOf({ code: 'Tab', ctrlKey: true, metaKey: false, altKey: false, shiftKey: true })!)).toBe('recent-tab-back');
    expect(commandForChord(table, 'Mod+Shift+M')).toBe('problems');
    expect(table['close-other-tabs']).toBeNull();
    const given = effectiveKeybindings({ 'close-other-tabs': 'alt+shift+w', split: null });
    expect(commandForChord(given, 'Alt+Shift+W')).toBe('close-other-tabs');
    expect(commandForChord(given, 'Mod+\\')).toBeNull();
    for (const id of boundCommandIds) {
      const chord = table[id];
      if (chord !== null) expect(bindable(chord)).toBe(true);
    }
  });
});
