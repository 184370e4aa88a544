import { describe, expect, it } from 'vitest';
import { NavigationHistory } from './navigationHistory';

const at = (path: string, line: number, group = 0) => ({ group, path, line, column: 1 });

describe('navigation history (Alt+Left / Alt+Right)', () => {
  it('goes back to where the caret was before a jump into another file, and forward again', () => {
    const history = new NavigationHistory();
    history.record(at('a.ts', 1));
    history.record(at('a.ts', 4)); // typing, arrow keys: the same place, refined
    history.record(at('b.ts', 30)); // F12
    expect(history.back()).toEqual(at('a.ts', 4));
    expect(history.back()).toBeNull();
    expect(history.forward()).toEqual(at('b.ts', 30));
    expect(history.forward()).toBeNull();
  });

  it('a far move in the same file is a place of its own; a new jump after Back drops Forward', () => {
    const history = new NavigationHistory();
    history.record(at('a.ts', 1));
    history.record(at('a.ts', 200));
    history.record(at('b.ts', 1));
    expect(history.back()).toEqual(at('a.ts', 200));
    history.record(at('c.ts', 5));
    expect(history.forward()).toBeNull();
    expect(history.back()).toEqual(at('a.ts', 200));
    expect(history.back()).toEqual(at('a.ts', 1));
  });
});
