/**
 * Files that stop being text under people (issue 32, item 9), on a real disk: nothing typed is
 * lost. A document grown past the size new files open at keeps syncing; a file re-saved in
 * another encoding keeps its document, says so on its entry (the tab shows it) and is not
 * overwritten, and syncs again once it is UTF-8 text.
 */
import type { IndexEntry } from '@flint/protocol';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fileIdOf, textOf } from '../../test/testHarness';
import type { DiskEvent } from '../core/ports/Disk';
import { maxTextBytes } from './fileText';
import { readText, RealFolders, until } from '../../test/realFolder';

const folders = new RealFolders();
afterEach(() => folders.cleanup());

/** What an editor's "save" does: the whole file at once (a temporary file renamed over it). */
function save(root: string, path: string, bytes: Uint8Array | string): void {
  writeFileSync(join(root, `${path}.saving`), bytes);
  renameSync(join(root, `${path}.saving`), join(root, path));
}

const entryAt = (ctx: Awaited<ReturnType<RealFolders['open']>>, path: string) => ctx.alice.index.doc.getMap<IndexEntry>('entries').get(path);

describe('a file that stops being text while people type', () => {
  it('a document typed past 1 MB keeps syncing: the next line typed reaches the disk', async () => {
    const line = `${'x'.repeat(99)}\n`;
    const big = line.repeat(Math.floor(maxTextBytes / line.length) - 1); // just under the limit
    const root = folders.folder({ 'big.txt': big });
    const batches: DiskEvent[][] = [];
    const ctx = await folders.open(root, { batches });
    const fileId = fileIdOf(ctx.alice, 'big.txt');
    const text = textOf(ctx.alice, fileId);
    await until(ctx.h, () => text.length === big.length, 'the document in the tab');
    text.insert(text.length, line.repeat(3)); // now over 1 MB
    await until(ctx.h, () => readText(root, 'big.txt')?.length === big.length + 3 * line.length, 'the growth on disk');
    // The watcher reads our own write back: a file over 1 MB is not opened as text, but this one is a document.
    await until(ctx.h, () => batches.length > 0, 'our write back through the watcher');
    text.insert(text.length, 'typed after\n');
    await until(ctx.h, () => readText(root, 'big.txt')?.endsWith('typed after\n') === true, 'the line typed after on disk');
    expect(entryAt(ctx, 'big.txt')).toEqual({ kind: 'file', fileId });
  });

  it('a UTF-8 file re-saved as latin-1 while someone types keeps its document and says why it stopped syncing', async () => {
    const original = 'head\ncafé\nmiddle 1\nmiddle 2\nmiddle 3\ntail\n';
    const root = folders.folder({ 'notes.txt': original });
    const ctx = await folders.open(root);
    const fileId = fileIdOf(ctx.alice, 'notes.txt');
    const text = textOf(ctx.alice, fileId);
    await until(ctx.h, () => text.toString() === original, 'the document in the tab');
    const latin1 = Buffer.from(original, 'latin1');
    text.insert(0, 'typed\n');
    ctx.h.flush(); // the gateway has the typing; its write is queued
    save(root, 'notes.txt', latin1);
    await until(ctx.h, () => entryAt(ctx, 'notes.txt')?.kind === 'file' && (entryAt(ctx, 'notes.txt') as { unsynced?: string }).unsynced === 'not-text', 'the entry to say why');
    text.insert(text.length, 'typed later\n');
    await ctx.sync.flushed();
    ctx.h.flush();
    expect(readFileSync(join(root, 'notes.txt'))).toEqual(latin1); // not overwritten
    expect(text.toString()).toBe(`typed\n${original}typed later\n`);
    expect(fileIdOf(ctx.alice, 'notes.txt')).toBe(fileId);

    // Saved as UTF-8 again: merged with everything typed meanwhile, and synced again.
    const resaved = original.replace('middle 2', 'middle two');
    save(root, 'notes.txt', resaved);
    await until(ctx.h, () => readText(root, 'notes.txt') === `typed\n${resaved}typed later\n`, 'the merge on disk');
    expect(text.toString()).toBe(`typed\n${resaved}typed later\n`);
    expect(entryAt(ctx, 'notes.txt')).toEqual({ kind: 'file', fileId });
  });
});
