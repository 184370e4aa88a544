import type { FlintClient } from '@flint/client';
import { CloseCode, shouldReconnect } from '@flint/protocol';
import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../storage/SqliteStore';
import { StoreError, type Store } from './ports/Store';
import { fileIdOf, Harness, hello, textOf } from '../../test/testHarness';

/**
 * A real SQLite store whose database can be "down": every call throws, as PostgresStore's
 * blocking calls do; with `asyncAppends`, appends answer later, as PostgresStore's do (a promise,
 * rejected while down).
 */
function flakyStore(asyncAppends = false, failing?: ReadonlySet<string>): { store: Store; down: { value: boolean } } {
  const inner = new SqliteStore(':memory:');
  const down = { value: false };
  const store = new Proxy(inner, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function' || key === 'close') return value;
      return (...args: unknown[]) => {
        const failure = new StoreError(`${String(key)}: the database does not answer`);
        if (asyncAppends && key === 'appendUpdate') {
          return down.value ? Promise.reject(failure) : Promise.resolve((value as (...a: unknown[]) => unknown).apply(target, args));
        }
        if (down.value && (!failing || failing.has(String(key)))) throw failure;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store, down };
}

/** Alice and Bob, two tabs on one gateway over a flaky store, both with a.ts open. */
async function twoTabs(asyncAppends: boolean, failing?: ReadonlySet<string>) {
  const { store, down } = flakyStore(asyncAppends, failing);
  const h = new Harness(store);
  const ws = h.gateway.createWorkspace('Flaky', { 'a.ts': 'const a = 1;\n' });
  const [alice, bob] = [0, 1].map(() => h.client(ws.workspaceId, ws.owner.token, { minBackoffMs: 50, maxBackoffMs: 50 })) as [FlintClient, FlintClient];
  h.flush();
  const fileId = fileIdOf(alice, 'a.ts');
  const [ta, tb] = [textOf(alice, fileId), textOf(bob, fileId)];
  h.flush();
  await Promise.resolve();
  return { h, ws, down, alice, bob, ta, tb };
}

/** a.ts as a new gateway on the same store loads it: what the store holds. */
function storedText(h: Harness, ws: { workspaceId: string; owner: { token: string } }): string {
  h.restart();
  const carol = h.client(ws.workspaceId, ws.owner.token);
  h.settle(() => carol.status.kind === 'open' && fileIdOf(carol, 'a.ts') !== '');
  const text = textOf(carol, fileIdOf(carol, 'a.ts'));
  h.settle(() => text.length > 0);
  return text.toString();
}

describe('a store that stops answering', () => {
  it('a change it could not store is shown to no one; the tabs reconnect (4503) and their sync stores it once the store is back', async () => {
    // Appends fail; reads (the writer's claim on its client id) still answer.
    const { h, ws, down, alice, bob, ta, tb } = await twoTabs(false, new Set(['appendUpdate']));
    down.value = true;
    ta.insert(0, '// alice\n');
    h.flush();
    await Promise.resolve(); // the room is dropped right after the update event that failed
    h.flush();
    // Not stored, so Bob never saw it; both sessions closed with a code that says "retry".
    expect(tb.toString()).toBe('const a = 1;\n');
    expect([alice.status.kind, bob.status.kind]).toEqual(['connecting', 'connecting']);
    expect(h.gateway.isRoomLoaded(ws.workspaceId)).toBe(false);
    expect(h.gateway.metrics.render()).toMatch(/flint_store_failures_total 1/);

    down.value = false;
    h.settle(() => alice.status.kind === 'open' && bob.status.kind === 'open' && tb.toString() === ta.toString());
    expect(tb.toString()).toBe('// alice\nconst a = 1;\n');
    expect(storedText(h, ws)).toBe('// alice\nconst a = 1;\n');
  });

  it('an append that fails after the change was shown here (a store that answers later): the room is dropped, and the tabs that hold the change store it again', async () => {
    const { h, ws, down, alice, bob, ta, tb } = await twoTabs(true, new Set(['appendUpdate']));
    down.value = true;
    ta.insert(0, '// alice\n');
    h.flush();
    expect(tb.toString()).toBe('// alice\nconst a = 1;\n'); // shown here before the store answered
    await new Promise((resolve) => setImmediate(resolve)); // the store says no
    h.flush();
    expect([alice.status.kind, bob.status.kind]).toEqual(['connecting', 'connecting']);
    expect(h.gateway.isRoomLoaded(ws.workspaceId)).toBe(false);
    down.value = false;
    h.settle(() => alice.status.kind === 'open' && bob.status.kind === 'open');
    await new Promise((resolve) => setImmediate(resolve));
    h.settle(() => tb.toString() === ta.toString());
    expect(storedText(h, ws)).toBe('// alice\nconst a = 1;\n');
  });

  it('a writer whose claim on its client id the store cannot read is closed with 4503 (retry); nothing is applied until it is back', async () => {
    const { h, ws, down, alice, bob, ta, tb } = await twoTabs(false);
    down.value = true;
    ta.insert(0, '// alice\n');
    h.flush();
    expect(tb.toString()).toBe('const a = 1;\n');
    expect(alice.status.kind).toBe('connecting');
    expect(h.gateway.isRoomLoaded(ws.workspaceId)).toBe(true); // a failed read drops no room
    down.value = false;
    h.settle(() => alice.status.kind === 'open' && bob.status.kind === 'open' && tb.toString() === ta.toString());
    expect(storedText(h, ws)).toBe('// alice\nconst a = 1;\n');
  });

  it('a link lookup the store cannot answer closes the new session with 4503 (retry), not as a bad frame', () => {
    const { store, down } = flakyStore();
    const h = new Harness(store);
    const ws = h.gateway.createWorkspace('Flaky', { 'a.ts': 'x\n' });
    down.value = true;
    const pair = h.openRaw();
    const codes: number[] = [];
    pair.client.onclose = (event) => codes.push(event.code ?? 0);
    hello(pair, ws.workspaceId, ws.owner.token);
    h.flush();
    expect(codes).toEqual([CloseCode.StoreUnavailable]);
    expect(shouldReconnect(CloseCode.StoreUnavailable)).toBe(true);
    down.value = false;
    const alice = h.client(ws.workspaceId, ws.owner.token);
    h.settle(() => alice.status.kind === 'open');
  });

  it('[I2] a compaction the store refuses does not freeze the doc: later edits still reach everyone and the store, and it is retried', () => {
    const { store, down } = flakyStore(false, new Set(['compactDoc']));
    const h = new Harness(store, { compactEveryUpdates: 10 });
    const ws = h.gateway.createWorkspace('Flaky', { 'a.ts': '' });
    const [alice, bob] = [0, 1].map(() => h.client(ws.workspaceId, ws.owner.token)) as [FlintClient, FlintClient];
    h.flush();
    const fileId = fileIdOf(alice, 'a.ts');
    const [ta, tb] = [textOf(alice, fileId), textOf(bob, fileId)];
    h.flush();
    down.value = true; // an advisory lock held elsewhere, a stalled database: compactDoc throws
    for (let i = 0; i < 25; i++) {
      ta.insert(ta.length, `a${i};`);
      h.flush();
    }
    expect(h.gateway.metrics.counter('flint_compaction_failures_total')).toBeGreaterThan(0);
    // The doc still flows: Bob sees each edit, and so does a tab on a new gateway over the same store.
    tb.insert(0, 'b;');
    h.flush();
    expect(tb.toString()).toBe(ta.toString());
    expect(ta.toString().startsWith('b;a0;')).toBe(true);
    down.value = false;
    h.clock.advance(60_000); // the retry compacts
    expect(h.gateway.metrics.counter('flint_doc_compactions_total')).toBeGreaterThan(0);
    expect(storedText(h, ws)).toBe(ta.toString());
  });

  it('[I2] an idle room whose compaction fails at unload stays loaded and unloads once the store is back; the gateway does not throw from its timer', () => {
    const { store, down } = flakyStore(false, new Set(['compactDoc']));
    const h = new Harness(store, { idleUnloadMs: 1_000 });
    const ws = h.gateway.createWorkspace('Flaky', { 'a.ts': 'x\n' });
    const alice = h.client(ws.workspaceId, ws.owner.token);
    h.flush();
    const ta = textOf(alice, fileIdOf(alice, 'a.ts'));
    h.flush();
    ta.insert(0, 'kept;');
    h.flush();
    alice.destroy();
    h.flush();
    down.value = true;
    expect(() => h.clock.advance(5_000)).not.toThrow();
    expect(h.gateway.isRoomLoaded(ws.workspaceId)).toBe(true);
    expect(h.gateway.metrics.counter('flint_unload_failures_total')).toBeGreaterThan(0);
    expect(() => h.clock.advance(30_000)).not.toThrow(); // retried with backoff, still down
    down.value = false;
    h.clock.advance(300_000);
    expect(h.gateway.isRoomLoaded(ws.workspaceId)).toBe(false);
    expect(storedText(h, ws)).toBe('kept;x\n');
  });
});
