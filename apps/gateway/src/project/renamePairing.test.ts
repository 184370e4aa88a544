import { describe, expect, it } from 'vitest';
import { renamedFrom, type DeletedFile } from './renamePairing';

const file = (path: string, digest: string, base: string | null = null): DeletedFile => ({ path, digest, base: () => base });

describe('which deleted file a new one is, moved', () => {
  it('the one with its bytes, a same-named one first', () => {
    const deleted = [file('a/x.py', 'd1'), file('a/__init__.py', 'empty'), file('b/__init__.py', 'empty')];
    expect(renamedFrom('c/x.py', 'd1', () => undefined, deleted)).toBe('a/x.py');
    expect(renamedFrom('c/__init__.py', 'empty', () => undefined, deleted)).toBe('a/__init__.py');
    expect(renamedFrom('c/y.py', 'empty', () => undefined, deleted)).toBe('a/__init__.py');
  });

  it('failing that, the one most like it by lines, at half of them or more; otherwise none', () => {
    const deleted = [file('one.ts', 'd1', 'a\nb\nc\nd\n'), file('two.ts', 'd2', 'a\nb\nx\ny\n')];
    expect(renamedFrom('moved.ts', 'd3', () => 'a\nb\nc\nD\n', deleted)).toBe('one.ts');
    expect(renamedFrom('moved.ts', 'd3', () => 'a\nq\nr\ns\n', deleted)).toBeUndefined();
    expect(renamedFrom('two.ts', 'd3', () => 'a\nb\nz\nw\n', deleted)).toBe('two.ts'); // a tie: the same name
    expect(renamedFrom('moved.ts', 'd3', () => undefined, deleted)).toBeUndefined(); // not text
  });
});
