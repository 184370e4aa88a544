/**
 * Seeded property (issue 24): any interleaving of disk writes, renames and deletes with live
 * edits from two browsers converges — the disk, the gateway and both browsers end with the same
 * files and texts — and every character a browser typed that the other browser saw is in the
 * final files. The folder is a MemoryDisk whose watcher delivers when the test says.
 *
 * Issue 36: a file has a document only once a browser opens it (typing is a step after its
 * open), so histories hold files never opened, opened midway, and read by a search before
 * (from the disk, no document made); and restarts (the sync stopped and the gateway replaced,
 * the disk changing while it is down, then opened again from the store).
 */
import { FILE_TEXT_KEY, type IndexEntry } from '@flint/protocol';
import { propertyParameters } from '@flint/test-kit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FlintClient } from '@flint/client';
import { Harness } from '../../test/testHarness';
import { FolderSync } from './FolderSync';
import { MemoryDisk } from '../../test/MemoryDisk';

type Op =
  | { kind: 'type'; who: 0 | 1; file: number; at: number }
  | { kind: 'net' }
  | { kind: 'disk-insert'; file: number; at: number }
  | { kind: 'disk-create' }
  | { kind: 'disk-rename'; file: number }
  | { kind: 'disk-delete-own' }
  | { kind: 'deliver' }
  | { kind: 'read'; file: number }
  | { kind: 'restart' };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('type' as const), who: fc.constantFrom(0 as const, 1 as const), file: fc.nat(9), at: fc.double({ min: 0, max: 1, noNaN: true }) }) },
  { weight: 3, arbitrary: fc.constant({ kind: 'net' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('disk-insert' as const), file: fc.nat(9), at: fc.double({ min: 0, max: 1, noNaN: true }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'disk-create' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('disk-rename' as const), file: fc.nat(9) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'disk-delete-own' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'deliver' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('read' as const), file: fc.nat(9) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'restart' as const }) },
);

function filesOf(client: FlintClient): string[] {
  const paths: string[] = [];
  for (const [path, entry] of client.index.doc.getMap<IndexEntry>('entries')) if (entry.kind === 'file') paths.push(path);
  return paths.sort();
}

async function run(ops: Op[]): Promise<void> {
  const disk = new MemoryDisk();
  for (const name of ['a.ts', 'b.ts', 'c.ts']) disk.files.set(name, { bytes: new TextEncoder().encode(`${name} 1\n${name} 2\n${name} 3\n`), mode: 0o644 });
  const h = new Harness();
  const ws = h.gateway.createWorkspace('Folder');
  let held = h.gateway.holdRoom(ws.workspaceId)!;
  const startSync = async () => {
    const started = new FolderSync({ workspaceId: ws.workspaceId, room: held.room, disk, bases: { get: (k) => h.store.getMeta(k), set: (k, v) => h.store.setMeta(k, v) }, log: () => {}, writeDelayMs: 0, renameWindowMs: 0 });
    await started.start();
    return started;
  };
  let sync = await startSync();
  let clients = [h.client(ws.workspaceId, ws.owner.token), h.client(ws.workspaceId, ws.owner.token)];
  h.flush();
  // Down: the sync stopped (what was pending written) and the gateway gone; the disk may change.
  let down = false;
  const up = async () => {
    if (!down) return;
    down = false;
    held = h.gateway.holdRoom(ws.workspaceId)!;
    sync = await startSync();
    clients = [h.client(ws.workspaceId, ws.owner.token), h.client(ws.workspaceId, ws.owner.token)];
    h.flush();
    noteSeen();
  };
  const textIn = (client: FlintClient, path: string) => {
    const entry = client.index.doc.getMap<IndexEntry>('entries').get(path);
    return entry?.kind === 'file' ? client.openDoc(entry.fileId).doc.getText(FILE_TEXT_KEY) : null;
  };
  const everything = (client: FlintClient) => filesOf(client).map((path) => textIn(client, path)?.toString() ?? '').join('\n');
  const typed: Array<{ token: string; by: number }> = [];
  const seen = new Set<string>();
  const noteSeen = () => {
    for (const { token, by } of typed) if (!seen.has(token) && everything(clients[1 - by]!).includes(token)) seen.add(token);
  };
  let made = 0;
  const own: string[] = [];
  for (const step of ops) {
    // The disk changes while the gateway is down; anything else brings it back first.
    if (down && !step.kind.startsWith('disk-')) await up();
    switch (step.kind) {
      case 'type': {
        const client = clients[step.who]!;
        const paths = filesOf(client);
        const path = paths[step.file % Math.max(1, paths.length)];
        const entry = path ? client.index.doc.getMap<IndexEntry>('entries').get(path) : undefined;
        if (entry?.kind !== 'file') break;
        const handle = client.openDoc(entry.fileId);
        // A browser types in a file it has open (synced); opening it is a step of its own.
        if (!handle.synced) break;
        const text = handle.doc.getText(FILE_TEXT_KEY);
        const token = `<${step.who}:${typed.length}>`;
        text.insert(Math.floor(step.at * text.length), token);
        typed.push({ token, by: step.who });
        break;
      }
      case 'net':
        h.flush();
        noteSeen();
        break;
      case 'disk-insert': {
        const paths = [...disk.files.keys()].sort();
        const path = paths[step.file % Math.max(1, paths.length)];
        const current = path ? disk.text(path) : null;
        if (path === undefined || current === null) break;
        const lines = current.split('\n');
        lines.splice(Math.floor(step.at * lines.length), 0, `disk ${made++}`);
        disk.external(path, lines.join('\n'));
        break;
      }
      case 'disk-create': {
        const path = `new-${made++}.ts`;
        own.push(path);
        disk.external(path, `created ${path}\n`);
        break;
      }
      case 'disk-rename': {
        const paths = [...disk.files.keys()].sort();
        const from = paths[step.file % Math.max(1, paths.length)];
        if (from === undefined) break;
        disk.externalRename(from, `renamed-${made++}.ts`);
        break;
      }
      case 'disk-delete-own': {
        const path = own.shift();
        if (path !== undefined && disk.files.has(path)) disk.external(path, null);
        break;
      }
      case 'deliver':
        disk.deliver();
        await sync.flushed();
        break;
      case 'read': {
        // A search (or the agent's) reads a file: a never-opened one from the disk, as it is.
        const room = held.room;
        const paths = [...room.entries.keys()].filter((path) => room.entries.get(path)?.kind === 'file').sort();
        const path = paths[step.file % Math.max(1, paths.length)];
        const entry = path === undefined ? undefined : room.entries.get(path);
        if (entry?.kind !== 'file') break;
        const loaded = room.loadedFiles().has(entry.fileId);
        const text = room.textOf(entry.fileId);
        if (entry.listed) expect(text, path).toBe(disk.text(path!));
        // No document is made, or kept, by a read.
        expect(room.loadedFiles().has(entry.fileId)).toBe(loaded);
        expect(room.entries.get(path!)).toEqual(entry);
        break;
      }
      case 'restart':
        if (down) break;
        h.flush();
        noteSeen();
        await sync.stop();
        held.release();
        h.restart();
        down = true;
        break;
    }
  }
  await up();
  // Quiet: everything delivered, written and synced.
  for (let i = 0; i < 6; i++) {
    h.flush();
    noteSeen();
    disk.deliver();
    await sync.flushed();
  }
  const room = held.room;
  // Before anything is opened for the checks: the tree is the disk's listing, and a file no one
  // opened has no document.
  expect([...disk.files.keys()].sort()).toEqual(filesOf(clients[0]!));
  for (const [path, entry] of room.entries) if (entry.kind === 'file' && entry.listed) expect(room.loadedFiles().has(entry.fileId), path).toBe(false);
  for (const client of clients) for (const path of filesOf(client)) textIn(client, path);
  h.flush();
  const gatewayFiles = new Map<string, string>();
  for (const [path, entry] of room.entries) if (entry.kind === 'file') gatewayFiles.set(path, room.doc(entry.fileId)!.doc.getText(FILE_TEXT_KEY).toString());
  expect([...disk.files.keys()].sort()).toEqual([...gatewayFiles.keys()].sort());
  for (const [path, text] of gatewayFiles) {
    expect(disk.text(path), path).toBe(text);
    for (const client of clients) expect(textIn(client, path)?.toString(), path).toBe(text);
  }
  const final = [...gatewayFiles.values()].join('\n');
  for (const token of seen) expect(final).toContain(token);
  await sync.stop();
}

describe('a folder project under any interleaving', () => {
  it('converges and keeps every character another browser saw (seeded)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 5, maxLength: 40 }), (ops) => run(ops)),
      propertyParameters(60),
    );
  }, 300_000);
});
