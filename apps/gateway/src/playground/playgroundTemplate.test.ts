/** A playground's template, read from a real folder: text files only, links and build output left out. */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { demoWorkspaceFiles } from '../seed/demoWorkspace';
import { readPlaygroundTemplate, TemplateError } from './playgroundTemplate';

let scratch: string | null = null;
afterEach(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  scratch = null;
});

function folder(files: Record<string, string | Uint8Array>): string {
  scratch = mkdtempSync(join(tmpdir(), 'flint-template-'));
  const root = join(scratch, 'workshop');
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

describe('readPlaygroundTemplate', () => {
  it('copies the text files, and leaves out binaries, links, .git and node_modules', () => {
    const root = folder({
      'README.md': '# Workshop\n',
      'src/main.ts': 'export const x = 1;\n',
      'logo.png': new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 0xff]),
      '.git/HEAD': 'ref: refs/heads/main\n',
      'node_modules/dep/index.js': 'module.exports = 1;\n',
    });
    symlinkSync('/etc/passwd', join(root, 'passwd'));
    const template = readPlaygroundTemplate(root);
    expect(template.name).toBe('workshop (playground)');
    expect(template.files).toEqual({ 'README.md': '# Workshop\n', 'src/main.ts': 'export const x = 1;\n' });
  });

  it('is the built-in demo for "demo", and an error naming the folder when there is nothing to copy', () => {
    expect(readPlaygroundTemplate('demo').files).toBe(demoWorkspaceFiles);
    expect(() => readPlaygroundTemplate(join(tmpdir(), 'flint-no-such-template'))).toThrow(/There is no template folder/);
    const empty = folder({ 'bin.dat': new Uint8Array([0, 0, 0]) });
    expect(() => readPlaygroundTemplate(empty)).toThrow(TemplateError);
    expect(() => readPlaygroundTemplate(empty)).toThrow(/no text files/);
  });
});
