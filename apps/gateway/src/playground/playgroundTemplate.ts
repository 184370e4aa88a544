import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative, resolve, sep } from 'node:path';
import { demoWorkspaceFiles } from '../seed/demoWorkspace';

/** A playground's template: the files every visitor's workspace starts with. */
export interface PlaygroundTemplate {
  name: string;
  files: Record<string, string>;
}

/** Folders never copied, as for a folder project (README, "Open a folder"). */
const skipped = new Set(['.git', 'node_modules', 'dist', 'build', 'out', 'coverage', '.next', '.cache', '.flint-data']);
const maxFiles = 500;
const maxFileBytes = 1024 * 1024;
const maxTotalBytes = 16 * 1024 * 1024;

export class TemplateError extends Error {}

/**
 * Reads the template once, at startup: UTF-8 text files under `folder` (links not followed,
 * binaries and files over 1 MB left out), or the built-in demo project for the name `demo`.
 * A template with nothing to copy, or too much, is an error naming why.
 */
export function readPlaygroundTemplate(folder: string): PlaygroundTemplate {
  if (folder === 'demo') return { name: 'Tally (playground)', files: demoWorkspaceFiles };
  const root = resolve(folder);
  if (!existsSync(root) || !lstatSync(root).isDirectory()) throw new TemplateError(`There is no template folder at ${root}: give a folder of files to copy, or "demo".`);
  let total = 0;
  const files: Record<string, string> = {};
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const walk = (dir: string) => {
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch (error) {
      throw new TemplateError(`Cannot read the template folder ${dir}: ${(error as Error).message}`);
    }
    for (const name of names) {
      const path = join(dir, name);
      const stat = lstatSync(path);
      if (stat.isDirectory()) {
        if (!skipped.has(name)) walk(path);
        continue;
      }
      if (!stat.isFile() || stat.size > maxFileBytes) continue;
      const bytes = readFileSync(path);
      let text: string;
      try {
        text = decoder.decode(bytes);
      } catch {
        continue; // not UTF-8 text: a binary the playground does not copy
      }
      if (text.includes('\u0000')) continue;
      total += bytes.byteLength;
      if (Object.keys(files).length >= maxFiles || total > maxTotalBytes) {
        throw new TemplateError(`The template ${root} holds more than ${maxFiles} files or ${maxTotalBytes / 1024 / 1024} MB of text; a playground template should be small.`);
      }
      files[relative(root, path).split(sep).join('/')] = text;
    }
  };
  walk(root);
  if (Object.keys(files).length === 0) throw new TemplateError(`The template ${root} has no text files to copy.`);
  return { name: `${basename(root)} (playground)`, files };
}
