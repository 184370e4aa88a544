/**
 * `npx tsx bench/makeVariant.ts <rev> [dir]`: a checkout of <rev> for `BENCH_VARIANT_ROOT` (the
 * code before a change, as one more arm of the same run). A git worktree at `dir` (default
 * /tmp/flint-variant), whose node_modules links to this checkout's packages, except `@flint/*`,
 * which link to the worktree's own apps/ and packages/ (the code under test on that side).
 * Remove it with `git worktree remove --force <dir>`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readlinkSync, symlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const [rev, dirArg] = process.argv.slice(2);
if (!rev) {
  console.error('usage: npx tsx bench/makeVariant.ts <rev> [dir]');
  process.exit(2);
}
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dir = resolve(dirArg ?? '/tmp/flint-variant');
if (existsSync(dir)) {
  console.error(`${dir} exists; remove it first (git worktree remove --force ${dir})`);
  process.exit(2);
}
execFileSync('git', ['worktree', 'add', '--detach', dir, rev], { cwd: root, stdio: 'inherit' });

const ours = join(root, 'node_modules');
const theirs = join(dir, 'node_modules');
mkdirSync(theirs);
for (const entry of readdirSync(ours)) {
  if (entry === '@flint') continue;
  symlinkSync(join(ours, entry), join(theirs, entry));
}
// The workspace packages: the same relative links npm made here, so they resolve inside `dir`.
mkdirSync(join(theirs, '@flint'));
for (const name of readdirSync(join(ours, '@flint'))) {
  symlinkSync(readlinkSync(join(ours, '@flint', name)), join(theirs, '@flint', name));
}
console.log(`variant of ${rev} at ${dir}: BENCH_VARIANT_ROOT=${dir} npm run bench -- --only B1`);
