import { describe, expect, it } from 'vitest';
import { allTabs, closeInGroup, keepFiles, maxGroups, openInGroup, recentAt, singleGroup, splitRight, tabsRightOf, type GroupLayout } from './editorGroups';

function opened(...ids: string[]): GroupLayout {
  return ids.reduce((layout, id) => openInGroup(layout, 0, id), singleGroup);
}

describe('editor groups', () => {
  it('split right opens the active file in a new group beside it, with the keyboard there', () => {
    const layout = splitRight(opened('a', 'b'), 0);
    expect(layout.groups.map((g) => [g.tabs, g.activeFileId])).toEqual([
      [['a', 'b'], 'b'],
      [['b'], 'b'],
    ]);
    expect(layout.focusedGroup).toBe(1);
    expect(allTabs(layout)).toEqual(['a', 'b']);
  });

  it(`holds at most ${maxGroups} groups; another split moves to the next one`, () => {
    let layout = opened('a');
    for (let i = 0; i < maxGroups + 2; i++) layout = splitRight(layout, layout.focusedGroup);
    expect(layout.groups).toHaveLength(maxGroups);
    expect(layout.focusedGroup).toBe(maxGroups - 1);
    expect(splitRight(singleGroup, 0)).toBe(singleGroup); // no file: nothing to split
  });

  it('closing the last tab of a split group closes the group; the only group stays, empty', () => {
    let layout = splitRight(opened('a', 'b'), 0);
    layout = closeInGroup(layout, 1, ['b']);
    expect(layout.groups).toHaveLength(1);
    expect(layout.focusedGroup).toBe(0);
    layout = closeInGroup(layout, 0, ['a', 'b']);
    expect(layout.groups).toEqual([{ tabs: [], activeFileId: null, recent: [] }]);
  });

  it('closing the active tab shows the file used before it', () => {
    let layout = opened('a', 'b', 'c');
    layout = openInGroup(layout, 0, 'a');
    layout = openInGroup(layout, 0, 'c');
    expect(closeInGroup(layout, 0, ['c']).groups[0]?.activeFileId).toBe('a');
  });

  it('Ctrl+Tab walks the most recently used order, wrapping both ways', () => {
    let layout = opened('a', 'b', 'c');
    layout = openInGroup(layout, 0, 'a');
    const group = layout.groups[0]!;
    expect(group.recent).toEqual(['a', 'c', 'b']);
    expect(recentAt(group, 1)).toBe('c');
    expect(recentAt(group, 2)).toBe('b');
    expect(recentAt(group, 3)).toBe('a');
    expect(recentAt(group, -1)).toBe('b');
    expect(recentAt(opened('a').groups[0]!, 1)).toBeNull();
  });

  it('close to the right and deleted files', () => {
    const layout = splitRight(opened('a', 'b', 'c'), 0);
    expect(tabsRightOf(layout.groups[0]!, 'a')).toEqual(['b', 'c']);
    const kept = keepFiles(layout, (id) => id !== 'c');
    expect(kept.groups).toHaveLength(1);
    expect(kept.groups[0]?.tabs).toEqual(['a', 'b']);
    expect(kept.groups[0]?.activeFileId).toBe('b');
    expect(keepFiles(layout, () => true)).toBe(layout);
  });
});
