/**
 * Decomposed names (issue 32, item 10) on a real disk: macOS writes names in NFD, the workspace
 * shows them in NFC, and every read and write goes to the disk's own spelling — an edit never
 * makes a second file beside the first, and NFD files made later appear.
 */
import type { IndexEntry } from '@flint/protocol';
import { readdirSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fileIdOf, textOf } from '../../test/testHarness';
import { readText, RealFolders, until } from '../../test/realFolder';

const folders = new RealFolders();
afterEach(() => folders.cleanup());

const nfd = (name: string) => name.normalize('NFD');

describe('a folder whose names are decomposed (NFD)', () => {
  it('shows them composed and reads, writes, renames and deletes the files the disk has', async () => {
    const root = folders.folder({ [nfd('café.txt')]: 'one\n', [nfd('Résumé/a.txt')]: 'a\n' });
    const ctx = await folders.open(root);
    const paths = () => [...ctx.alice.index.doc.getMap<IndexEntry>('entries').keys()].sort();
    expect(paths()).toEqual(['Résumé/a.txt', 'café.txt']);

    // An edit reaches the file the disk has; no second file appears beside it.
    const text = textOf(ctx.alice, fileIdOf(ctx.alice, 'café.txt'));
    ctx.h.flush();
    text.insert(0, 'typed\n');
    await until(ctx.h, () => readText(root, nfd('café.txt')) === 'typed\none\n', 'the edit in the NFD file');
    await ctx.sync.flushed();
    expect(readdirSync(root).sort()).toEqual([nfd('Résumé'), nfd('café.txt')]);

    // A file made in the IDE inside the NFD folder goes into that folder, not a composed twin.
    await ctx.h.answered(ctx.alice.request({ type: 'file.create', path: 'Résumé/b.txt', kind: 'file' }));
    await until(ctx.h, () => readText(root, nfd('Résumé/b.txt')) === '', 'the new file in the NFD folder');
    expect(readdirSync(root).sort()).toEqual([nfd('Résumé'), nfd('café.txt')]);

    // NFD files made later on disk appear, and follow their edits and deletes.
    writeFileSync(join(root, nfd('naïve.txt')), 'naive\n');
    mkdirSync(join(root, nfd('Über')));
    writeFileSync(join(root, nfd('Über/ö.txt')), 'oe\n');
    await until(ctx.h, () => paths().includes('naïve.txt') && paths().includes('Über/ö.txt'), 'the new NFD files in the tree');
    const naive = textOf(ctx.alice, fileIdOf(ctx.alice, 'naïve.txt'));
    await until(ctx.h, () => naive.toString() === 'naive\n', 'its text in the tab');
    writeFileSync(join(root, nfd('naïve.txt')), 'naive\nedited\n');
    await until(ctx.h, () => naive.toString() === 'naive\nedited\n', 'the disk edit in the tab');
    rmSync(join(root, nfd('Über/ö.txt')));
    await until(ctx.h, () => !paths().includes('Über/ö.txt'), 'the delete in the tree');

    // Renamed and deleted from the IDE: the NFD files move and go.
    await ctx.h.answered(ctx.alice.request({ type: 'file.rename', from: 'café.txt', to: 'coffee.txt' }));
    await ctx.h.answered(ctx.alice.request({ type: 'file.delete', path: 'naïve.txt' }));
    await until(ctx.h, () => readText(root, 'coffee.txt') === 'typed\none\n' && readText(root, nfd('naïve.txt')) === null, 'the rename and delete on disk');
    expect(readText(root, nfd('café.txt'))).toBeNull();
  });
});
