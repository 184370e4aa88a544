import { describe, expect, it } from 'vitest';
import { forgetWorkspace, recentWorkspaces, rememberWorkspace, storedToken } from './recentWorkspaces';
import { loadLayout } from './workspaceLayout';

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

describe('the workspaces this browser opened', () => {
  it('lists them newest first, with the token that gets back in', () => {
    const storage = memoryStorage();
    rememberWorkspace({ id: 'w1', name: 'One', role: 'owner', token: 't1' }, 1, storage);
    rememberWorkspace({ id: 'w2', name: 'Two', role: 'viewer', token: 't2' }, 2, storage);
    expect(recentWorkspaces(storage).map((w) => w.id)).toEqual(['w2', 'w1']);
    expect(storedToken('w1', storage)).toBe('t1');
    expect(storedToken('w3', storage)).toBeNull();
  });

  it('keeps the owner token when a weaker link of the same workspace is opened later', () => {
    const storage = memoryStorage();
    rememberWorkspace({ id: 'w1', name: 'One', role: 'owner', token: 'owner' }, 1, storage);
    rememberWorkspace({ id: 'w1', name: 'Renamed', role: 'editor', token: 'editor' }, 2, storage);
    expect(recentWorkspaces(storage)).toEqual([{ id: 'w1', name: 'Renamed', role: 'owner', token: 'owner', lastOpenedAt: 2 }]);
  });

  it('forgets a token that stopped working, and only that one', () => {
    const storage = memoryStorage();
    rememberWorkspace({ id: 'w1', name: 'One', role: 'owner', token: 'owner' }, 1, storage);
    forgetWorkspace('w1', 'some-other-token', storage);
    expect(storedToken('w1', storage)).toBe('owner');
    forgetWorkspace('w1', 'owner', storage);
    expect(storedToken('w1', storage)).toBeNull();
  });

  it('reads damaged storage as empty rather than failing the page', () => {
    const storage = memoryStorage();
    storage.setItem('flint.workspaces', '{not json');
    storage.setItem('flint.layout.w1', '[1,2');
    expect(recentWorkspaces(storage)).toEqual([]);
    expect(loadLayout('w1', storage)).toEqual({ groups: [], focusedGroup: 0, cursors: {} });
  });
});
