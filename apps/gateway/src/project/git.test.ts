import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultGitOptions, findGitFolder, readGitStatus, readHeadText, type GitFolder } from './git';

/** Real git in temporary folders. */
const made: string[] = [];
afterAll(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function tempDir(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'flint-git-')));
  made.push(dir);
  return dir;
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8' });
}

function write(root: string, path: string, text: string): void {
  mkdirSync(join(root, path, '..'), { recursive: true });
  writeFileSync(join(root, path), text);
}

/** A repository with one commit of `files`. */
function repoWith(root: string, files: Record<string, string>): void {
  git(root, 'init', '-q', '-b', 'main');
  git(root, 'config', 'user.name', 'Flint Test');
  git(root, 'config', 'user.email', 'test@flint.invalid');
  for (const [path, text] of Object.entries(files)) write(root, path, text);
  git(root, 'add', '-A');
  git(root, '-c', 'commit.gpgsign=false', 'commit', '-q', '-m', 'first');
}

/** Changes one file of each kind under `dir` ("" or "sub/"). */
function changeEach(root: string, dir: string): void {
  write(root, `${dir}edited.ts`, 'edited\n');
  git(root, 'mv', `${dir}old.ts`, `${dir}moved.ts`);
  write(root, `${dir}staged.ts`, 'new\n');
  git(root, 'add', `${dir}staged.ts`);
  write(root, `${dir}deep/untracked.ts`, 'loose\n');
  rmSync(join(root, `${dir}gone.ts`));
}

const expected = [
  { path: 'deep/untracked.ts', status: 'untracked' },
  { path: 'edited.ts', status: 'modified' },
  { path: 'gone.ts', status: 'deleted' },
  { path: 'moved.ts', status: 'renamed' },
  { path: 'staged.ts', status: 'added' },
];
const byPath = (a: { path: string }, b: { path: string }) => a.path.localeCompare(b.path);

describe('git status of a folder', () => {
  it('reports modified, added, deleted, renamed (new path) and untracked files, and the branch', async () => {
    const root = tempDir();
    repoWith(root, { 'edited.ts': 'a\n', 'old.ts': 'b\n', 'gone.ts': 'c\n' });
    changeEach(root, '');
    const repo = (await findGitFolder(root))!;
    expect(repo.prefix).toBe('');
    const status = await readGitStatus(repo);
    expect(status.branch).toBe('main');
    expect(status.files.sort(byPath)).toEqual(expected);
  });

  it('in a subfolder of a repository: only its files, by paths relative to it', async () => {
    const root = tempDir();
    repoWith(root, { 'outside.ts': 'x\n', 'sub/edited.ts': 'a\n', 'sub/old.ts': 'b\n', 'sub/gone.ts': 'c\n' });
    changeEach(root, 'sub/');
    write(root, 'outside.ts', 'changed outside\n');
    write(root, 'loose-outside.ts', 'x\n');
    const repo = (await findGitFolder(join(root, 'sub')))!;
    expect(repo.prefix).toBe('sub/');
    expect((await readGitStatus(repo)).files.sort(byPath)).toEqual(expected);
  });

  it('spells paths in NFC, as the workspace does', async () => {
    const root = tempDir();
    repoWith(root, { 'a.ts': 'a\n' });
    write(root, 'cafe\u0301.ts', 'decomposed\n');
    const status = await readGitStatus((await findGitFolder(root))!);
    expect(status.files).toEqual([{ path: 'caf\u00e9.ts', status: 'untracked' }]);
  });

  it('a detached HEAD has no branch; a repository with no commit yet has its branch and added files', async () => {
    const detached = tempDir();
    repoWith(detached, { 'a.ts': 'a\n' });
    git(detached, 'checkout', '-q', '--detach');
    expect((await readGitStatus((await findGitFolder(detached))!)).branch).toBeNull();

    const fresh = tempDir();
    git(fresh, 'init', '-q', '-b', 'trunk');
    write(fresh, 'a.ts', 'a\n');
    git(fresh, 'add', 'a.ts');
    expect(await readGitStatus((await findGitFolder(fresh))!)).toEqual({ branch: 'trunk', files: [{ path: 'a.ts', status: 'added' }] });
  });

  it('a folder in no repository, the inside of .git, or no git installed: not a git folder', async () => {
    const plain = tempDir();
    expect(await findGitFolder(plain)).toBeNull();
    const root = tempDir();
    repoWith(root, { 'a.ts': 'a\n' });
    expect(await findGitFolder(join(root, '.git'))).toBeNull();
    expect(await findGitFolder(root, { ...defaultGitOptions, binary: join(plain, 'no-such-git') })).toBeNull();
  });
});

describe('a file at HEAD', () => {
  let repo: GitFolder;
  it('is the committed text, relative to the folder, not what is on disk now', async () => {
    const root = tempDir();
    repoWith(root, { 'sub/a.ts': 'committed\r\n', 'sub/b[1].ts': 'brackets\n', 'sub/dir/c.ts': 'c\n' });
    write(root, 'sub/a.ts', 'edited\n');
    repo = (await findGitFolder(join(root, 'sub')))!;
    expect(await readHeadText(repo, 'a.ts', 1024)).toBe('committed\r\n');
    // Paths are literal, never patterns.
    expect(await readHeadText(repo, 'b[1].ts', 1024)).toBe('brackets\n');
  });

  it('is null for an untracked file, a folder, a file too large, and when there is no HEAD yet', async () => {
    write(repo.folder, 'untracked.ts', 'loose\n');
    expect(await readHeadText(repo, 'untracked.ts', 1024)).toBeNull();
    expect(await readHeadText(repo, 'dir', 1024)).toBeNull();
    expect(await readHeadText(repo, 'a.ts', 4)).toBeNull();
    const fresh = tempDir();
    git(fresh, 'init', '-q');
    write(fresh, 'a.ts', 'a\n');
    expect(await readHeadText((await findGitFolder(fresh))!, 'a.ts', 1024)).toBeNull();
  });
});
