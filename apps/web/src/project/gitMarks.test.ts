import { describe, expect, it } from 'vitest';
import type { GitChange, ProjectInfo } from '../api/projectApi';
import { gitMarks, noGitMarks, sameProjectInfo, sortChanges } from './gitMarks';

describe('git marks in the tree', () => {
  it('gives each changed file its letter: M, A, U, D, R', () => {
    const marks = gitMarks([
      { path: 'a.ts', status: 'modified' },
      { path: 'b.ts', status: 'added' },
      { path: 'c.ts', status: 'untracked' },
      { path: 'd.ts', status: 'deleted' },
      { path: 'e.ts', status: 'renamed' },
    ]);
    expect(Object.fromEntries(marks.files)).toEqual({ 'a.ts': 'M', 'b.ts': 'A', 'c.ts': 'U', 'd.ts': 'D', 'e.ts': 'R' });
    expect(marks.folders.size).toBe(0);
  });

  it('puts a count on every folder above a changed file, deleted files included', () => {
    const marks = gitMarks([
      { path: 'src/app/main.ts', status: 'modified' },
      { path: 'src/app/old.ts', status: 'deleted' },
      { path: 'src/util.ts', status: 'untracked' },
      { path: 'docs/guide.md', status: 'added' },
    ]);
    expect(Object.fromEntries(marks.folders)).toEqual({ 'src/app': 2, src: 3, docs: 1 });
    expect(marks.folders.has('')).toBe(false);
  });

  it('leaves folders without changes unmarked, and has nothing to mark for a clean tree', () => {
    expect(gitMarks([{ path: 'src/a.ts', status: 'modified' }]).folders.has('lib')).toBe(false);
    expect(gitMarks([])).toBe(noGitMarks);
  });

  it('counts a path listed twice once', () => {
    const marks = gitMarks([
      { path: 'src/a.ts', status: 'modified' },
      { path: 'src/a.ts', status: 'modified' },
    ]);
    expect(marks.folders.get('src')).toBe(1);
  });

  it('sorts the Changes view by path, numbers in natural order', () => {
    const changes: GitChange[] = [
      { path: 'src/file10.ts', status: 'modified' },
      { path: 'README.md', status: 'modified' },
      { path: 'src/file2.ts', status: 'added' },
    ];
    expect(sortChanges(changes).map((c) => c.path)).toEqual(['README.md', 'src/file2.ts', 'src/file10.ts']);
  });

  it('tells a repeated answer from a changed one', () => {
    const answer = (files: GitChange[], branch: string | null = 'main'): ProjectInfo => ({ folder: true, git: { branch, files } });
    const one: GitChange[] = [{ path: 'a.ts', status: 'modified' }];
    expect(sameProjectInfo(answer(one), answer([...one]))).toBe(true);
    expect(sameProjectInfo(answer(one), answer([{ path: 'a.ts', status: 'added' }]))).toBe(false);
    expect(sameProjectInfo(answer(one), answer(one, 'dev'))).toBe(false);
    expect(sameProjectInfo(answer(one), answer([]))).toBe(false);
    expect(sameProjectInfo(answer(one), { folder: true, git: null })).toBe(false);
    expect(sameProjectInfo({ folder: false, git: null }, { folder: false, git: null })).toBe(true);
    expect(sameProjectInfo(null, { folder: false, git: null })).toBe(false);
  });
});
