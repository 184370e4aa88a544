import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from './SqliteStore';
import type { LinkRecord, Store } from './Store';

const dir = mkdtempSync(join(tmpdir(), 'flint-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

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
];

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

  it('appends, loads, compacts and deletes document updates in order', () => {
    const { store, reopen } = make();
    store.appendUpdate('w1/d', new Uint8Array([1]));
    store.appendUpdate('w1/d', new Uint8Array([2, 2]));
    store.appendUpdate('w1/other', new Uint8Array([9]));
    expect(store.loadDoc('w1/d')).toEqual({ updates: [new Uint8Array([1]), new Uint8Array([2, 2])], bytes: 3 });
    store.compactDoc('w1/d', new Uint8Array([3, 3, 3]));
    store.appendUpdate('w1/d', new Uint8Array([4]));
    expect(store.loadDoc('w1/d').updates).toEqual([new Uint8Array([3, 3, 3]), new Uint8Array([4])]);
    if (reopen) {
      store.close();
      const again = reopen();
      expect(again.loadDoc('w1/d').updates).toEqual([new Uint8Array([3, 3, 3]), new Uint8Array([4])]);
      again.deleteDoc('w1/d');
      expect(again.loadDoc('w1/d')).toEqual({ updates: [], bytes: 0 });
      expect(again.loadDoc('w1/other').updates).toHaveLength(1);
      again.close();
    }
  });

  it('sets aside updates that cannot be applied, keeping them out of the document', () => {
    const { store, reopen } = make();
    store.appendUpdate('w1/d', new Uint8Array([1]));
    store.appendUpdate('w1/d', new Uint8Array([6, 6]));
    store.setAsideUpdates('w1/d', [new Uint8Array([6, 6])], 'not a Yjs update', new Uint8Array([1, 1]), 42);
    expect(store.loadDoc('w1/d')).toEqual({ updates: [new Uint8Array([1, 1])], bytes: 2 });
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
