import { describe, expect, it } from 'vitest';
import { loadLayout, saveCursor, saveLayout } from './workspaceLayout';

function memoryStorage(): Storage {
  const items = new Map<string, string>();
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

describe('a workspace layout', () => {
  it('keeps the editor groups, their tabs and active files, carets and the font size per workspace', () => {
    const storage = memoryStorage();
    const groups = [
      { tabs: ['a.ts', 'b.ts'], active: 'b.ts' },
      { tabs: ['b.ts'], active: 'b.ts' },
    ];
    saveLayout('w1', { groups, focusedGroup: 1 }, storage);
    saveCursor('w1', 'b.ts', 5, 3, storage);
    expect(loadLayout('w1', storage)).toEqual({ groups, focusedGroup: 1, cursors: { 'b.ts': { line: 5, column: 3 } } });
    expect(loadLayout('w2', storage).groups).toEqual([]);
  });

  it('reads a layout written before split editors as one group', () => {
    const storage = memoryStorage();
    storage.setItem('flint.layout.w1', JSON.stringify({ tabs: ['a.ts', 7, 'b.ts'], active: 'a.ts', cursors: {}, fontSize: null }));
    expect(loadLayout('w1', storage)).toMatchObject({ groups: [{ tabs: ['a.ts', 'b.ts'], active: 'a.ts' }], focusedGroup: 0 });
    storage.setItem('flint.layout.w1', JSON.stringify({ groups: 'no', focusedGroup: -2 }));
    expect(loadLayout('w1', storage)).toMatchObject({ groups: [], focusedGroup: 0 });
  });

  it('keeps the carets of the 200 files visited last', () => {
    const storage = memoryStorage();
    for (let i = 0; i < 205; i++) saveCursor('w1', `f${i}.ts`, i + 1, 1, storage);
    const { cursors } = loadLayout('w1', storage);
    expect(Object.keys(cursors)).toHaveLength(200);
    expect(cursors['f4.ts']).toBeUndefined();
    expect(cursors['f204.ts']).toEqual({ line: 205, column: 1 });
  });
});
