import { describe, expect, it } from 'vitest';
import { compileGlobs } from './pathGlobs';

const matching = (globs: string, paths: string[]) => {
  const filter = compileGlobs(globs);
  return filter ? paths.filter(filter) : paths;
};

const paths = ['README.md', 'src/a.ts', 'src/a.test.ts', 'src/deep/b.ts', 'test/c.ts', 'docs/src/x.md'];

describe('[P36] include / exclude globs', () => {
  it('an empty list matches everything', () => {
    expect(compileGlobs(' , ')).toBeNull();
  });

  it('a glob without a slash matches a name at any depth; a folder matches everything in it', () => {
    expect(matching('*.md', paths)).toEqual(['README.md', 'docs/src/x.md']);
    expect(matching('src', paths)).toEqual(['src/a.ts', 'src/a.test.ts', 'src/deep/b.ts', 'docs/src/x.md']);
    expect(matching('src/', paths)).toEqual(['src/a.ts', 'src/a.test.ts', 'src/deep/b.ts', 'docs/src/x.md']);
  });

  it('a glob with a slash is anchored at the root; ** crosses folders, {a,b} and ? as in VS Code', () => {
    expect(matching('src/*.ts', paths)).toEqual(['src/a.ts', 'src/a.test.ts']);
    expect(matching('src/**/*.ts', paths)).toEqual(['src/a.ts', 'src/a.test.ts', 'src/deep/b.ts']);
    expect(matching('**/*.test.ts, test', paths)).toEqual(['src/a.test.ts', 'test/c.ts']);
    expect(matching('*.{md,json}', paths)).toEqual(['README.md', 'docs/src/x.md']);
    expect(matching('src/?.ts', paths)).toEqual(['src/a.ts']);
  });

  it('regex characters in a glob are literal, and a hostile glob costs linear time (RE2)', () => {
    expect(matching('a(b|c)+.ts', ['a(b|c)+.ts', 'abc.ts'])).toEqual(['a(b|c)+.ts']);
    const filter = compileGlobs(`${'*a'.repeat(40)}b`)!;
    expect(filter('a'.repeat(1000))).toBe(false);
  });
});
