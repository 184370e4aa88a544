/**
 * A file whose lines end some CRLF, some LF (issue 32 #7): the document holds it in LF as any
 * file, and an edit rewrites only the lines it changed — every other line keeps its own ending.
 */
import { describe, expect, it } from 'vitest';
import { fileIdOf, Harness, textOf } from '../../test/testHarness';
import { decodeText, encodeLike } from './fileText';
import { FolderSync } from './FolderSync';
import { MemoryDisk } from '../../test/MemoryDisk';

const bytes = (text: string) => new TextEncoder().encode(text);
const mixed = 'windows\r\nunix\nwindows again\r\nlast\r\n';

describe('a file of mixed line endings', () => {
  it('is spelled like the file it replaces: unchanged lines keep their endings, new ones get the usual', () => {
    const { text, format } = decodeText(bytes(mixed))!;
    expect(text).toBe('windows\nunix\nwindows again\nlast\n');
    expect(format).toEqual({ bom: false, crlf: true, mixed: true });
    const edited = 'windows\nunix\ninserted\nwindows again, edited\nlast\n';
    expect(new TextDecoder().decode(encodeLike(edited, format, bytes(mixed)))).toBe('windows\r\nunix\ninserted\r\nwindows again, edited\r\nlast\r\n');
    expect(encodeLike(text, format, bytes(mixed))).toEqual(bytes(mixed));
    const bom = bytes(`\ufeff${mixed}`);
    expect(encodeLike(text, decodeText(bom)!.format, bom)).toEqual(bom);
  });

  it('an edit in the IDE changes only that line on disk', async () => {
    const disk = new MemoryDisk();
    disk.files.set('notes.txt', { bytes: bytes(mixed), mode: 0o644 });
    const h = new Harness();
    const ws = h.gateway.createWorkspace('Folder');
    const held = h.gateway.holdRoom(ws.workspaceId)!;
    const sync = new FolderSync({ workspaceId: ws.workspaceId, room: held.room, disk, bases: { get: (k) => h.store.getMeta(k), set: (k, v) => h.store.setMeta(k, v) }, log: () => {}, writeDelayMs: 0 });
    await sync.start();
    const alice = h.client(ws.workspaceId, ws.owner.token);
    h.flush();
    const text = textOf(alice, fileIdOf(alice, 'notes.txt'));
    h.flush();
    expect(text.toString()).toBe('windows\nunix\nwindows again\nlast\n');
    text.insert(text.toString().indexOf('last'), 'typed\n');
    h.flush();
    await sync.flushed();
    expect(disk.text('notes.txt')).toBe('windows\r\nunix\nwindows again\r\ntyped\r\nlast\r\n');
    await sync.stop();
  });
});
