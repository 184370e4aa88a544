#!/usr/bin/env node
// `npm start`: install on first run, build the web app when its sources changed, serve.
// Plain JavaScript on purpose: it runs before dependencies (tsx, TypeScript) are installed.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function run(command, args) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`\n\`${command} ${args.join(' ')}\` failed (exit ${result.status}).`);
    process.exit(result.status ?? 1);
  }
}

function newestMtime(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) {
    if (entry === 'node_modules' || entry === 'dist') continue;
    newest = Math.max(newest, newestMtime(join(path, entry)));
  }
  return newest;
}

const installedMarker = join(root, 'node_modules', '.package-lock.json');
if (!existsSync(installedMarker) || statSync(join(root, 'package-lock.json')).mtimeMs > statSync(installedMarker).mtimeMs) {
  console.log('Installing dependencies (first run)…');
  run(npm, ['ci', '--no-audit', '--no-fund']);
}

const builtMarker = join(root, 'apps', 'web', 'dist', 'index.html');
const sources = Math.max(newestMtime(join(root, 'apps', 'web')), newestMtime(join(root, 'packages')));
if (!existsSync(builtMarker) || statSync(builtMarker).mtimeMs < sources) {
  console.log('Building the web app…');
  run(npm, ['run', 'build']);
}

// Arguments go to the gateway (`npm start -- ./project`, `flint --port 4000 ./project`); a
// relative folder means relative to where the command was typed (npm runs scripts from the root).
const gateway = spawn(process.execPath, ['--import', 'tsx', join(root, 'apps', 'gateway', 'src', 'main.ts'), ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, FLINT_INVOKED_FROM: process.env.INIT_CWD ?? process.cwd() },
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => gateway.kill(signal));
gateway.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
