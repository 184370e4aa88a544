import type { FlintClient } from '@flint/client';
import { CloseCode, shouldReconnect } from '@flint/protocol';
import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../storage/SqliteStore';
import { StoreError, type Store } from '../storage/Store';
import { fileIdOf, Harness, hello, textOf } from './testHarness';

/**
 * A real SQLite store whose database can be "down": every call throws, as PostgresStore's
 * blocking calls do; with `asyncAppends`, appends answer later, as PostgresStore's do (a promise,
 * rejected while down).
 */
function flakyStore(asyncAppends = false): { store: Store; down: { value: boolean } } {
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
        if (down.value) throw failure;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store, down };
}

/** Alice and Bob, two tabs on one gateway over a flaky store, both with a.ts open. */
async function twoTabs(asyncAppends: boolean) {
  const { store, down } = flakyStore(asyncAppends);
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
    const { h, ws, down, alice, bob, ta, tb } = await twoTabs(false);
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
    const { h, ws, down, alice, bob, ta, tb } = await twoTabs(true);
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
});
