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
  it('keeps tabs, the active one, carets and the font size per workspace', () => {
    const storage = memoryStorage();
    saveLayout('w1', { tabs: ['a.ts', 'b.ts'], active: 'b.ts', fontSize: 15 }, storage);
    saveCursor('w1', 'b.ts', 5, 3, storage);
    expect(loadLayout('w1', storage)).toEqual({ tabs: ['a.ts', 'b.ts'], active: 'b.ts', cursors: { 'b.ts': { line: 5, column: 3 } }, fontSize: 15 });
    expect(loadLayout('w2', storage).tabs).toEqual([]);
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
