import { FILE_TEXT_KEY } from '@flint/protocol';
import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../../storage/SqliteStore';
import type { Store } from '../ports/Store';
import { fileIdOf, Harness, textOf } from '../../../test/testHarness';
import { MemoryBus, MemoryHub } from '../../../test/MemoryBus';

/** The shared database, seen by one gateway through a store whose appends answer when the test says. */
function heldAppends(database: SqliteStore): { store: Store; release(): void; held(): number } {
  const waiting: Array<() => void> = [];
  const store = new Proxy(database, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (key !== 'appendUpdate') return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      return (docKey: string, update: Uint8Array) =>
        new Promise<void>((resolve) =>
          waiting.push(() => {
            target.appendUpdate(docKey, update);
            resolve();
          }),
        );
    },
  });
  return { store, release: () => waiting.splice(0).forEach((store) => store()), held: () => waiting.length };
}

/** Runs both gateways' timers and the bus until nothing more is in flight. */
function settler(hub: MemoryHub, a: Harness, b: Harness): () => void {
  return () => {
    for (let round = 0; round < 20; round++) {
      a.flush();
      b.flush();
      if (hub.deliver() === 0) return;
    }
  };
}

describe('what crosses gateways is stored', () => {
  it('an edit not stored yet reaches the sessions of its own gateway, and no other gateway — not even in an answer to a sync', async () => {
    const hub = new MemoryHub();
    const database = new SqliteStore(':memory:');
    const slow = heldAppends(database);
    const [busA, busB] = [new MemoryBus(hub, 'gA'), new MemoryBus(hub, 'gB')];
    const a = new Harness(slow.store, {}, undefined, undefined, () => busA);
    const b = new Harness(database, {}, undefined, undefined, () => busB);
    void busA.start(a.gateway.cluster);
    void busB.start(b.gateway.cluster);
    const ws = b.gateway.createWorkspace('Stored', { 'a.ts': 'x\n' });
    const settle = settler(hub, a, b);
    const alice = a.client(ws.workspaceId, ws.owner.token);
    const aliceTab2 = a.client(ws.workspaceId, ws.owner.token);
    settle();
    slow.release();
    await Promise.resolve();
    settle();
    const fileId = fileIdOf(alice, 'a.ts');
    const ta = textOf(alice, fileId);
    const ta2 = textOf(aliceTab2, fileId);
    settle();
    slow.release();
    await Promise.resolve();
    settle();

    ta.insert(0, 'unstored ');
    settle();
    expect(slow.held()).toBeGreaterThan(0);
    expect(ta2.toString()).toBe('unstored x\n'); // her other tab, on the same gateway, has it
    // Bob is on gateway B, which now asks A for what it lacks (as after its bus connection came back).
    const bob = b.client(ws.workspaceId, ws.owner.token);
    settle();
    const tb = textOf(bob, fileId);
    busB.listener?.following(ws.workspaceId);
    settle();
    await Promise.resolve();
    settle();
    expect(tb.toString()).toBe('x\n');
    expect(b.gateway.document(ws.workspaceId, fileId)!.getText(FILE_TEXT_KEY).toString()).toBe('x\n');

    slow.release();
    await new Promise((resolve) => setImmediate(resolve));
    settle();
    expect(tb.toString()).toBe('unstored x\n');
  });

  it('what a gateway stored but never published before it died is read back by the survivors when they learn it is gone', () => {
    const hub = new MemoryHub();
    const database = new SqliteStore(':memory:');
    const [busA, busB] = [new MemoryBus(hub, 'gA'), new MemoryBus(hub, 'gB')];
    const a = new Harness(database, {}, undefined, undefined, () => busA);
    const b = new Harness(database, {}, undefined, undefined, () => busB);
    void busA.start(a.gateway.cluster);
    void busB.start(b.gateway.cluster);
    const ws = b.gateway.createWorkspace('Died', { 'a.ts': 'x\n' });
    const settle = settler(hub, a, b);
    const alice = a.client(ws.workspaceId, ws.owner.token);
    const bob = b.client(ws.workspaceId, ws.owner.token);
    settle();
    const fileId = fileIdOf(alice, 'a.ts');
    const [ta, tb] = [textOf(alice, fileId), textOf(bob, fileId)];
    settle();
    // A stores Alice's edit, then dies before its announcement leaves (lost with the process).
    hub.drop = () => true;
    ta.insert(0, 'stored, never published ');
    settle();
    expect(tb.toString()).toBe('x\n');
    hub.drop = () => false;
    b.gateway.cluster.gatewayGone('gA');
    settle();
    expect(tb.toString()).toBe('stored, never published x\n');
  });
});

