import { execFile } from 'node:child_process';

/**
 * What git sees in a folder project (issue 24), asked of the `git` command line: no git library,
 * nothing that reads the object store itself. Every call runs git without a shell, with a timeout
 * and a bounded output, and never takes the index lock (`--no-optional-locks`): the people who own
 * the repository run git in it at the same time.
 */

export type GitFileStatus = 'modified' | 'added' | 'deleted' | 'untracked' | 'renamed';

export interface GitStatus {
  /** The checked-out branch; null on a detached HEAD. */
  branch: string | null;
  /** Changed files under the folder, by path relative to it (forward slashes, NFC). */
  files: Array<{ path: string; status: GitFileStatus }>;
}

/** A folder inside a git work tree: the folder, and where it sits in the repository ("" or "sub/dir/"). */
export interface GitFolder {
  folder: string;
  prefix: string;
}

export interface GitOptions {
  /** The git executable (a test names a missing one). */
  binary: string;
  timeoutMs: number;
  maxOutputBytes: number;
}

export const defaultGitOptions: GitOptions = { binary: 'git', timeoutMs: 10_000, maxOutputBytes: 16 * 1024 * 1024 };

/** Git ran, but did not answer (a timeout, too much output, an unreadable repository). */
export class GitError extends Error {}

type Run = { ok: true; stdout: Buffer } | { ok: false; exitCode: number | null; missing: boolean; message: string };

/**
 * Variables that would point git at another repository than the folder's: set in the gateway's
 * environment (a gateway started from a git hook), they would answer for the wrong repository.
 */
const repositoryVariables = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_COMMON_DIR', 'GIT_NAMESPACE'];

function gitEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0' };
  for (const name of repositoryVariables) delete env[name];
  return env;
}

function run(folder: string, args: string[], options: GitOptions): Promise<Run> {
  // core.fsmonitor names a program git runs on status: never one a repository's config chose.
  const argv = ['-C', folder, '--no-optional-locks', '--literal-pathspecs', '-c', 'core.fsmonitor=false', ...args];
  return new Promise((resolve) => {
    execFile(
      options.binary,
      argv,
      { encoding: 'buffer', timeout: options.timeoutMs, maxBuffer: options.maxOutputBytes, env: gitEnvironment(), windowsHide: true },
      (error, stdout, stderr) => {
        if (!error) return resolve({ ok: true, stdout });
        const code = (error as NodeJS.ErrnoException).code;
        resolve({
          ok: false,
          exitCode: typeof code === 'number' ? code : null,
          missing: code === 'ENOENT',
          message: error.killed ? `git ${args[0]} took longer than ${options.timeoutMs} ms` : stderr.toString('utf8').trim() || error.message,
        });
      },
    );
  });
}

function failed(args: string, result: Run & { ok: false }): GitError {
  return new GitError(`git ${args} failed: ${result.message}`);
}

/** Git's bytes as the workspace spells a path: UTF-8, NFC (macOS writes names decomposed). */
const pathText = (bytes: Buffer) => bytes.toString('utf8').normalize('NFC');

/**
 * The folder's place in its git work tree; null when it is in none (no repository, the inside of
 * a `.git` directory, a repository git refuses to read as another user's) or git is not installed.
 */
export async function findGitFolder(folder: string, options: GitOptions = defaultGitOptions): Promise<GitFolder | null> {
  const result = await run(folder, ['rev-parse', '--is-inside-work-tree', '--show-prefix'], options);
  if (!result.ok) {
    // 128 is git's "fatal": not a repository, or one it will not read; neither is a git folder.
    if (result.missing || result.exitCode === 128) return null;
    throw failed('rev-parse', result);
  }
  const [inside, prefix = ''] = result.stdout.toString('utf8').split('\n');
  return inside === 'true' ? { folder, prefix: pathText(Buffer.from(prefix, 'utf8')) } : null;
}

/** One `XY path` record of `status --porcelain=v1` as what it means for the file now. */
function statusOf(x: string, y: string): GitFileStatus | null {
  if (x === '?') return 'untracked';
  if (x === 'R' || y === 'R') return 'renamed';
  // Added to the index, then deleted: it is neither at HEAD nor on disk.
  if (x === 'A' && y === 'D') return null;
  if (x === 'D' || y === 'D') return 'deleted';
  if (x === 'A' || x === 'C') return 'added';
  return 'modified';
}

/** The branch, and every changed, added, deleted, renamed or untracked file under the folder. */
export async function readGitStatus(repo: GitFolder, options: GitOptions = defaultGitOptions): Promise<GitStatus> {
  const status = await run(repo.folder, ['status', '--porcelain=v1', '-z', '--untracked-files=all', '--', '.'], options);
  if (!status.ok) throw failed('status', status);
  const branch = await run(repo.folder, ['symbolic-ref', '--quiet', '--short', 'HEAD'], options);
  // `symbolic-ref --quiet` exits 1, saying nothing, when HEAD is detached.
  if (!branch.ok && branch.exitCode !== 1) throw failed('symbolic-ref', branch);

  const files: GitStatus['files'] = [];
  const records = splitNul(status.stdout);
  for (let i = 0; i < records.length; i++) {
    const record = records[i]!;
    const [x, y] = [record.toString('latin1', 0, 1), record.toString('latin1', 1, 2)];
    // -z writes a rename as "R  new\0old": the old path is the next record.
    if (x === 'R' || x === 'C' || y === 'R' || y === 'C') i++;
    const kind = statusOf(x, y);
    const path = pathText(record.subarray(3));
    // Paths are the repository's; `.` kept them inside the folder.
    if (kind === null || !path.startsWith(repo.prefix)) continue;
    files.push({ path: path.slice(repo.prefix.length), status: kind });
  }
  return { branch: branch.ok ? branch.stdout.toString('utf8').trim() || null : null, files };
}

function splitNul(output: Buffer): Buffer[] {
  const records: Buffer[] = [];
  for (let start = 0; start < output.length; ) {
    let end = output.indexOf(0, start);
    if (end === -1) end = output.length;
    records.push(output.subarray(start, end));
    start = end + 1;
  }
  return records;
}

/**
 * A file's text at HEAD (path relative to the folder); null when HEAD does not exist yet, has no
 * such file, has it as something other than a regular file, or its bytes are not UTF-8 text of at
 * most `maxBytes`.
 */
export async function readHeadText(repo: GitFolder, path: string, maxBytes: number, options: GitOptions = defaultGitOptions): Promise<string | null> {
  const head = await run(repo.folder, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], options);
  if (!head.ok) {
    if (head.exitCode === 1) return null;
    throw failed('rev-parse', head);
  }
  // ls-tree first: whether HEAD has the path is its exit status and output, not an error message to read.
  const listed = await run(repo.folder, ['ls-tree', '-z', '-l', 'HEAD', '--', path], options);
  if (!listed.ok) throw failed('ls-tree', listed);
  const entry = splitNul(listed.stdout)[0]?.toString('utf8');
  // "<mode> <type> <object> <size>\t<path>"
  const [mode, type, , size] = entry?.slice(0, entry.indexOf('\t')).split(/ +/) ?? [];
  if (type !== 'blob' || (mode !== '100644' && mode !== '100755') || Number(size) > maxBytes) return null;
  const shown = await run(repo.folder, ['show', '--no-textconv', `HEAD:${repo.prefix}${path}`], { ...options, maxOutputBytes: Math.max(maxBytes, 1) + 1 });
  if (!shown.ok) throw failed('show', shown);
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(shown.stdout);
  } catch {
    return null; // not text: nothing to compare the workspace's document with
  }
}
