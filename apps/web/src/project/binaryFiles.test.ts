import type { IndexEntry } from '@flint/protocol';
import { describe, expect, it } from 'vitest';
import { buildTree } from '../fileTree/buildTree';
import { entryBytes, formatBytes, isBinaryEntry } from './binaryFiles';

describe('binary files in the tree', () => {
  it('an entry is binary only when the gateway marked it so', () => {
    expect(isBinaryEntry({ kind: 'file', fileId: 'f1', binary: true, bytes: 10 })).toBe(true);
    expect(isBinaryEntry({ kind: 'file', fileId: 'f1', binary: true })).toBe(true);
    expect(isBinaryEntry({ kind: 'file', fileId: 'f1' })).toBe(false);
    expect(isBinaryEntry({ kind: 'folder' })).toBe(false);
    expect(isBinaryEntry(undefined)).toBe(false);
  });

  it('reads the size a binary entry gives, and none when it gives none or nonsense', () => {
    expect(entryBytes({ kind: 'file', fileId: 'f1', binary: true, bytes: 12_595 })).toBe(12_595);
    expect(entryBytes({ kind: 'file', fileId: 'f1', binary: true })).toBeNull();
    expect(entryBytes({ kind: 'file', fileId: 'f1', binary: true, bytes: -1 })).toBeNull();
    expect(entryBytes({ kind: 'folder' })).toBeNull();
  });

  it('writes sizes as file managers do', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(1023)).toBe('1023 B');
    expect(formatBytes(1024)).toBe('1.0 KB');
    expect(formatBytes(12_595)).toBe('12.3 KB');
    expect(formatBytes(150 * 1024)).toBe('150 KB');
    expect(formatBytes(5 * 1024 * 1024 + 300 * 1024)).toBe('5.3 MB');
    expect(formatBytes(3 * 1024 ** 3)).toBe('3.0 GB');
  });

  it('buildTree carries a binary file with its size, and leaves text files unmarked', () => {
    const entries = new Map<string, IndexEntry>([
      ['img/logo.png', { kind: 'file', fileId: 'f1', binary: true, bytes: 2048 }],
      ['img/blob.bin', { kind: 'file', fileId: 'f2', binary: true }],
      ['img/notes.md', { kind: 'file', fileId: 'f3' }],
    ]);
    const [img] = buildTree(entries);
    const byName = new Map(img?.children.map((node) => [node.name, node]));
    expect(byName.get('logo.png')?.binary).toEqual({ bytes: 2048 });
    expect(byName.get('blob.bin')?.binary).toEqual({ bytes: null });
    expect(byName.get('notes.md')).not.toHaveProperty('binary');
  });
});
