import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDatabase, startPostgres } from '@flint/test-kit';
import { afterAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { PostgresStore } from './PostgresStore';
import { SqliteStore } from './SqliteStore';
import type { LinkRecord, Store } from '../core/ports/Store';

const dir = mkdtempSync(join(tmpdir(), 'flint-store-'));
const postgres = await startPostgres();
/** Stores the tests leave open, closed before their server stops. */
const postgresStores: PostgresStore[] = [];
let databases = 0;
afterAll(async () => {
  for (const store of postgresStores) store.close();
  await postgres.stop();
  rmSync(dir, { recursive: true, force: true });
});

const openPostgres = (url: string): PostgresStore => {
  const store = new PostgresStore(url);
  postgresStores.push(store);
  return store;
};

/** One contract, every Store implementation and configuration. */
const implementations: Array<[string, () => { store: Store; reopen: (() => Store) | null }]> = [
  ['SqliteStore in memory', () => ({ store: new SqliteStore(':memory:'), reopen: null })],
  [
    'SqliteStore on disk (WAL)',
    () => {
      const file = join(dir, `${Math.random().toString(36).slice(2)}.sqlite`);
      return { store: new SqliteStore(file), reopen: () => new SqliteStore(file) };
    },
  ],
  [
    'PostgresStore',
    () => {
      const url = createDatabase(postgres, `contract_${++databases}`);
      return { store: openPostgres(url), reopen: () => openPostgres(url) };
    },
  ],
];

/** A document's successive updates, one per edit of its text, as a gateway would append them. */
function editor() {
  const doc = new Y.Doc();
  const text = doc.getText('t');
  let last: Uint8Array = new Uint8Array();
  doc.on('update', (update: Uint8Array) => (last = update));
  return {
    doc,
    insert(at: number, value: string): Uint8Array {
      text.insert(at, value);
      return last;
    },
  };
}

/** The text of the document the stored updates make. */
function textOf(updates: Uint8Array[]): string {
  const doc = new Y.Doc();
  for (const update of updates) Y.applyUpdate(doc, update);
  expect(doc.store.pendingStructs).toBeNull();
  return doc.getText('t').toString();
}

const link = (overrides: Partial<LinkRecord> = {}): LinkRecord => ({
  id: 'l1',
  workspaceId: 'w1',
  role: 'editor',
  tokenHash: 'ab'.repeat(32),
  label: 'Editor link',
  createdAt: 1,
  expiresAt: null,
  revokedAt: null,
  ...overrides,
});

describe.each(implementations)('Store contract: %s', (_name, make) => {
  it('stores workspaces and meta values', () => {
    const { store } = make();
    store.createWorkspace({ id: 'w1', name: 'One', createdAt: 5 });
    expect(store.getWorkspace('w1')).toEqual({ id: 'w1', name: 'One', createdAt: 5 });
    expect(store.getWorkspace('nope')).toBeNull();
    expect(store.getMeta('k')).toBeNull();
    store.setMeta('k', 'v1');
    store.setMeta('k', 'v2');
    expect(store.getMeta('k')).toBe('v2');
  });

  it("deletes a workspace with its links, documents, set-aside updates and meta, and nothing of another's", () => {
    const { store, reopen } = make();
    // "w_1" holds a LIKE wildcard: "wx1"'s rows must survive its deletion.
    for (const id of ['w_1', 'wx1']) {
      store.createWorkspace({ id, name: id, createdAt: 1 });
      store.createLink(link({ id: `l-${id}`, workspaceId: id, tokenHash: (id === 'w_1' ? 'a1' : 'b2').repeat(32) }));
      store.appendUpdate(`${id}/index`, new Uint8Array([1]));
      store.appendUpdate(`${id}/f1`, new Uint8Array([2]));
      store.setAsideUpdates(`${id}/f1`, [new Uint8Array([3])], 'test', new Uint8Array([2]), 1);
      store.setMeta(`model-connection:${id}`, 'x');
    }
    store.setMeta('demo_workspace_id', 'w_1');
    store.deleteWorkspace('w_1');
    for (const s of [store, ...(reopen ? [reopen()] : [])]) {
      expect(s.getWorkspace('w_1')).toBeNull();
      expect(s.findLinkByTokenHash('a1'.repeat(32))).toBeNull();
      expect(s.listLinks('w_1')).toEqual([]);
      expect(s.loadDoc('w_1/index').updates).toEqual([]);
      expect(s.loadDoc('w_1/f1').updates).toEqual([]);
      expect(s.listSetAside('w_1/f1')).toEqual([]);
      expect(s.getMeta('model-connection:w_1')).toBeNull();
      // Another workspace, and meta that merely mentions the id, stay.
      expect(s.getWorkspace('wx1')?.name).toBe('wx1');
      expect(s.listLinks('wx1')).toHaveLength(1);
      expect(s.loadDoc('wx1/f1').updates).not.toEqual([]);
      expect(s.listSetAside('wx1/f1')).toHaveLength(1);
      expect(s.getMeta('model-connection:wx1')).toBe('x');
      expect(s.getMeta('demo_workspace_id')).toBe('w_1');
    }
  });

  it('stores links by token hash, lists them and revokes once', () => {
    const { store } = make();
    store.createWorkspace({ id: 'w1', name: 'One', createdAt: 5 });
    store.createLink(link());
    store.createLink(link({ id: 'l2', tokenHash: 'cd'.repeat(32), role: 'viewer', expiresAt: 99, createdAt: 2 }));
    expect(store.findLinkByTokenHash('ab'.repeat(32))).toEqual(link());
    expect(store.findLinkByTokenHash('ef'.repeat(32))).toBeNull();
    expect(store.listLinks('w1').map((l) => l.id)).toEqual(['l1', 'l2']);
    store.revokeLink('l2', 10);
    store.revokeLink('l2', 20);
    expect(store.getLink('l2')?.revokedAt).toBe(10);
  });

  it('says which of some links are revoked, in one question', async () => {
    const { store } = make();
    store.createWorkspace({ id: 'w1', name: 'One', createdAt: 5 });
    store.createLink(link());
    store.createLink(link({ id: 'l2', tokenHash: 'cd'.repeat(32) }));
    store.createLink(link({ id: 'l3', tokenHash: 'ef'.repeat(32) }));
    expect(await store.revokedLinks(['l1', 'l2'])).toEqual([]);
    store.revokeLink('l2', 10);
    store.revokeLink('l3', 10);
    expect(await store.revokedLinks(['l1', 'l2', 'gone'])).toEqual(['l2']);
    expect(await store.revokedLinks([])).toEqual([]);
  });

  it('appends, loads, compacts and deletes document updates in order', () => {
    const { store, reopen } = make();
    const { doc, insert } = editor();
    const first = insert(0, 'ab');
    const second = insert(2, 'cd');
    store.appendUpdate('w1/d', first);
    store.appendUpdate('w1/d', second);
    store.appendUpdate('w1/other', new Uint8Array([9]));
    expect(store.loadDoc('w1/d')).toEqual({ updates: [first, second], bytes: first.byteLength + second.byteLength });
    store.compactDoc('w1/d', Y.encodeStateAsUpdate(doc));
    const third = insert(4, 'e');
    store.appendUpdate('w1/d', third);
    const compacted = store.loadDoc('w1/d');
    expect(compacted.updates).toHaveLength(2);
    expect(compacted.updates[1]).toEqual(third);
    expect(compacted.bytes).toBe(compacted.updates[0]!.byteLength + third.byteLength);
    expect(textOf(compacted.updates)).toBe('abcde');
    if (reopen) {
      store.close();
      const again = reopen();
      expect(again.loadDoc('w1/d')).toEqual(compacted);
      again.deleteDoc('w1/d');
      expect(again.loadDoc('w1/d')).toEqual({ updates: [], bytes: 0 });
      expect(again.loadDoc('w1/other').updates).toEqual([new Uint8Array([9])]);
      again.close();
    }
  });

  it('keeps the first claim of a Yjs client id per document, across a reopen, until the document is deleted', () => {
    const { store, reopen } = make();
    expect(store.clientOwner('w1/d', 4_000_000_000)).toBeNull();
    store.claimClient('w1/d', 4_000_000_000, 'link-a');
    store.claimClient('w1/d', 4_000_000_000, 'link-b'); // a second claim does not take it over
    store.claimClient('w1/other', 4_000_000_000, 'link-b');
    expect(store.clientOwner('w1/d', 4_000_000_000)).toBe('link-a');
    expect(store.clientOwner('w1/other', 4_000_000_000)).toBe('link-b');
    store.compactDoc('w1/d', Y.encodeStateAsUpdate(new Y.Doc()));
    expect(store.clientOwner('w1/d', 4_000_000_000)).toBe('link-a');
    const again = reopen ? (store.close(), reopen()) : store;
    expect(again.clientOwner('w1/d', 4_000_000_000)).toBe('link-a');
    again.deleteDoc('w1/d');
    expect(again.clientOwner('w1/d', 4_000_000_000)).toBeNull();
    expect(again.clientOwner('w1/other', 4_000_000_000)).toBe('link-b');
    again.close();
  });

  it('sets aside updates that cannot be applied, keeping them out of the document', () => {
    const { store, reopen } = make();
    const { doc, insert } = editor();
    store.appendUpdate('w1/d', insert(0, 'ab'));
    store.appendUpdate('w1/d', new Uint8Array([6, 6]));
    store.setAsideUpdates('w1/d', [new Uint8Array([6, 6])], 'not a Yjs update', Y.encodeStateAsUpdate(doc), 42);
    const { updates, bytes } = store.loadDoc('w1/d');
    expect(updates).toHaveLength(1);
    expect(bytes).toBe(updates[0]!.byteLength);
    expect(textOf(updates)).toBe('ab');
    expect(store.listSetAside('w1/d')).toEqual([{ data: new Uint8Array([6, 6]), reason: 'not a Yjs update', at: 42 }]);
    expect(store.listSetAside('w1/other')).toEqual([]);
    if (reopen) {
      store.close();
      const again = reopen();
      expect(again.listSetAside('w1/d')).toHaveLength(1);
      again.close();
    }
  });
});
