import { describe, expect, it } from 'vitest';
import { nearestCode } from './nearestCode';

const files = (paths: string[]) => paths.map((path, i): [string, string] => [`f${i}`, path]);

describe('the code files kept open', () => {
  it('keeps every one when there are few', () => {
    const code = files(['a.ts', 'src/b.ts']);
    expect(nearestCode(code, [], 5)).toEqual(code);
  });

  it('past the limit, keeps those nearest the open tabs, shallow ones first', () => {
    const code = files(['src/ui/a.ts', 'src/ui/b.ts', 'src/model/c.ts', 'lib/d.ts', 'index.ts', 'src/ui/deep/e.ts']);
    expect(nearestCode(code, ['src/ui/x.ts'], 3).map(([, path]) => path)).toEqual(['src/ui/a.ts', 'src/ui/b.ts', 'src/ui/deep/e.ts']);
    expect(nearestCode(code, [], 2).map(([, path]) => path)).toEqual(['index.ts', 'lib/d.ts']);
  });
});
