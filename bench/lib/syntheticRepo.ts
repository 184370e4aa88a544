/**
 * A committed git repository that looks like a mid-sized TypeScript project, generated from a
 * seed (the same seed gives the same files): nested src/ folders of TypeScript files of 1–8 KB,
 * some JSON and Markdown, a few binary files, a few CRLF ones, and a .gitignore that keeps a
 * node_modules/ folder of thousands of files, logs and a tmp/ folder out of version control —
 * what a folder project must not read. B12 opens it as a folder.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export interface SyntheticRepoOptions {
  /** Tracked files, all kinds together (the .gitignore included). */
  files: number;
  /** Files under the ignored node_modules/ (and a few logs, tmp/). */
  ignoredFiles: number;
  seed?: number;
}

export interface SyntheticRepo {
  root: string;
  /** Tracked paths, sorted as `git ls-files` gives them. */
  tracked: string[];
  /** Folders the tracked paths imply: the tree's folder rows. */
  folders: number;
  /** Bytes of the tracked text files (what a folder project holds as documents). */
  textBytes: number;
  binaryFiles: number;
  binaryBytes: number;
  ignoredFiles: number;
}

/** mulberry32: small, fast, and the same on every machine. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const words = ['session', 'room', 'index', 'cursor', 'token', 'buffer', 'range', 'patch', 'query', 'handler', 'store', 'entry', 'config', 'stream', 'parser', 'worker', 'client', 'request', 'result', 'schema', 'event', 'layout', 'limit', 'retry', 'budget', 'folder', 'symbol', 'scope', 'module', 'render', 'cache', 'queue'];
const modules = ['auth', 'billing', 'editor', 'search', 'sync', 'storage', 'routing', 'metrics', 'agent', 'layout', 'history', 'preview', 'settings', 'upload', 'review', 'presence'];
const layers = ['model', 'view', 'service', 'util', 'hooks', 'api', 'state', 'format'];

export function generateRepo(options: SyntheticRepoOptions): SyntheticRepo {
  const rand = random(options.seed ?? 24);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
  const ident = (upper = false) => {
    const name = `${pick(words)}${pick(words).replace(/^./, (c) => c.toUpperCase())}${Math.floor(rand() * 100)}`;
    return upper ? name.replace(/^./, (c) => c.toUpperCase()) : name;
  };
  const root = mkdtempSync(join(tmpdir(), 'flint-bench-repo-'));
  const files = new Map<string, string | Uint8Array>();

  const typeScript = (bytes: number): string => {
    const out = [`import { ${ident()}, ${ident()} } from '../${pick(layers)}/${pick(words)}';`, `import type { ${ident(true)} } from '@app/${pick(modules)}';`, ''];
    let size = out.join('\n').length;
    while (size < bytes) {
      const name = ident(true);
      const block =
        rand() < 0.3
          ? [`/** The ${pick(words)} a ${pick(words)} keeps while its ${pick(words)} is open. */`, `export interface ${name} {`, ...Array.from({ length: 3 + Math.floor(rand() * 6) }, () => `  ${ident()}: ${pick(['string', 'number', 'boolean', 'string[]', `${ident(true)} | null`])};`), '}', '']
          : [
              `export function ${ident()}(${ident()}: ${name}, ${ident()} = ${Math.floor(rand() * 1000)}): ${pick(['number', 'string', 'void', 'boolean'])} {`,
              `  const ${ident()} = ${ident()}.${ident()}.filter((item) => item.${ident()} > ${Math.floor(rand() * 50)});`,
              ...Array.from({ length: 2 + Math.floor(rand() * 8) }, () => `  if (${ident()}.${ident()} !== ${rand() < 0.5 ? 'null' : `'${pick(words)}'`}) ${ident()}.push(${ident()}(${ident()}, ${Math.floor(rand() * 100)}));`),
              `  return ${ident()}.length;`,
              '}',
              '',
            ];
      out.push(...block);
      size += block.join('\n').length + 1;
    }
    return out.join('\n');
  };
  const json = (bytes: number): string => {
    const record: Record<string, unknown> = {};
    while (JSON.stringify(record, null, 2).length < bytes) record[ident()] = rand() < 0.5 ? { [ident()]: Math.floor(rand() * 1e6), [ident()]: pick(words), list: [pick(words), pick(words)] } : `${pick(words)} ${pick(words)} ${pick(words)}`;
    return JSON.stringify(record, null, 2) + '\n';
  };
  const markdown = (bytes: number): string => {
    const out = [`# ${ident(true)}`, ''];
    while (out.join('\n').length < bytes) {
      out.push(`## The ${pick(words)} ${pick(words)}`, '', Array.from({ length: 30 + Math.floor(rand() * 40) }, () => pick(words)).join(' ') + '.', '', '```ts', `const ${ident()} = ${ident()}(${ident()});`, '```', '');
    }
    return out.join('\n');
  };
  const binary = (bytes: number): Uint8Array => {
    const out = new Uint8Array(bytes);
    for (let i = 0; i < bytes; i++) out[i] = Math.floor(rand() * 256);
    out.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d], 0);
    return out;
  };

  files.set('.gitignore', 'node_modules/\n*.log\n/tmp/\n');
  files.set('package.json', json(600));
  files.set('tsconfig.json', json(400));
  files.set('README.md', markdown(3000));
  const binaries = Math.max(2, Math.round(options.files * 0.004));
  for (let i = 0; i < binaries; i++) files.set(`assets/${pick(modules)}/${ident()}.png`, binary(2048 + Math.floor(rand() * 30_000)));
  for (let i = 0; files.size < options.files; i++) {
    const module = modules[i % modules.length]!;
    const folder = `src/${module}/${pick(layers)}${rand() < 0.4 ? `/${pick(words.slice(0, 4))}` : ''}`;
    const kind = rand();
    if (kind < 0.84) files.set(`${folder}/${ident()}.ts`, typeScript(1024 + Math.floor(rand() * 7 * 1024)));
    else if (kind < 0.92) files.set(`${rand() < 0.5 ? 'fixtures' : folder}/${ident()}.json`, json(500 + Math.floor(rand() * 3500)));
    else files.set(`docs/${module}/${ident()}.md`, markdown(800 + Math.floor(rand() * 4000)));
  }
  // A few files as Windows editors leave them: the sync must keep their line endings.
  let crlf = 0;
  for (const [path, content] of files) {
    if (crlf >= 5) break;
    if (typeof content === 'string' && path.endsWith('.ts')) {
      files.set(path, content.replace(/\n/g, '\r\n'));
      crlf++;
    }
  }

  let textBytes = 0;
  let binaryBytes = 0;
  let binaryFiles = 0;
  for (const [path, content] of files) {
    write(root, path, content);
    if (typeof content === 'string') textBytes += Buffer.byteLength(content);
    else {
      binaryBytes += content.byteLength;
      binaryFiles++;
    }
  }
  // Ignored: dependencies (many small files), logs, scratch output.
  const ignored = options.ignoredFiles;
  for (let i = 0; i < ignored; i++) {
    const path = i % 50 === 49 ? `tmp/${ident()}.txt` : i % 50 === 48 ? `logs/${ident()}.log` : `node_modules/${pick(words)}-${i % 97}/lib/${ident()}.js`;
    write(root, path, `module.exports = function ${ident()}() { return ${Math.floor(rand() * 1e6)}; };\n`);
  }

  const tracked = commitAll(root);
  if (tracked.length !== files.size) throw new Error(`git tracks ${tracked.length} files, ${files.size} were generated`);
  const folders = new Set<string>();
  for (const path of tracked) for (let at = path.lastIndexOf('/'); at > 0; at = path.lastIndexOf('/', at - 1)) folders.add(path.slice(0, at));
  return { root, tracked, folders: folders.size, textBytes, binaryFiles, binaryBytes, ignoredFiles: ignored };
}

function write(root: string, path: string, content: string | Uint8Array): void {
  const absolute = join(root, path);
  mkdirSync(dirname(absolute), { recursive: true });
  writeFileSync(absolute, content);
}

/** The control folder: the same kind of repository with one file (a README), committed. */
export function oneFileRepo(): SyntheticRepo {
  const root = mkdtempSync(join(tmpdir(), 'flint-bench-repo-'));
  const readme = '# One file\n\nThe folder B12 opens to see what a gateway and a page cost with (almost) nothing in them.\n';
  write(root, 'README.md', readme);
  commitAll(root);
  return { root, tracked: ['README.md'], folders: 0, textBytes: Buffer.byteLength(readme), binaryFiles: 0, binaryBytes: 0, ignoredFiles: 0 };
}

function commitAll(root: string): string[] {
  const git = (...args: string[]) => {
    const result = spawnSync('git', ['-c', 'user.name=Bench', '-c', 'user.email=bench@example.invalid', '-c', 'core.autocrlf=false', ...args], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    if (result.status !== 0) throw new Error(`git ${args.join(' ')} failed in ${root}: ${result.stderr}`);
    return result.stdout;
  };
  git('init', '-q', '-b', 'main');
  git('add', '.');
  git('commit', '-q', '-m', 'a generated project');
  return git('ls-files', '-z').split('\0').filter(Boolean);
}
