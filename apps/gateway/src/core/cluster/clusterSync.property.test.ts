import type { FlintClient } from '@flint/client';
import { FILE_TEXT_KEY } from '@flint/protocol';
import { propertyParameters } from '@flint/test-kit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { SqliteStore } from '../../storage/SqliteStore';
import { StoreError, type Store } from '../ports/Store';
import { fileIdOf, Harness, textOf } from '../../../test/testHarness';
import { MemoryBus, MemoryHub } from '../../../test/MemoryBus';

const step = fc.record({
  client: fc.nat({ max: 3 }),
  insert: fc.boolean(),
  at: fc.nat({ max: 999 }),
  char: fc.constantFrom(...'ab{};\n'),
  /** How many bus messages go out after the step (the rest wait). */
  deliver: fc.oneof(fc.constant(0), fc.constant(Infinity), fc.nat({ max: 6 })),
  /** One gateway's connection to the bus comes back: it follows again and asks. */
  resync: fc.option(fc.nat({ max: 1 }), { freq: 12 }),
});

const scenario = fc.record({
  /** Which gateway each of the four clients is on. */
  placement: fc.tuple(fc.nat({ max: 1 }), fc.nat({ max: 1 }), fc.nat({ max: 1 }), fc.nat({ max: 1 })),
  dropRate: fc.constantFrom(0, 0.1, 0.4),
  steps: fc.array(step, { maxLength: 80 }),
  seed: fc.integer(),
});

describe('two gateways over an unreliable bus', () => {
  it('clients on either gateway converge once the bus delivers again, whatever it dropped meanwhile, and the store holds what they hold', () => {
    fc.assert(
      fc.property(scenario, ({ placement, dropRate, steps, seed }) => {
        const hub = new MemoryHub();
        let rng = seed >>> 0;
        const random = () => ((rng = (Math.imul(rng, 1664525) + 1013904223) >>> 0) / 2 ** 32);
        hub.drop = () => random() < dropRate;
        const store = new SqliteStore(':memory:'); // the database both gateways share
        const buses = [new MemoryBus(hub, 'g0'), new MemoryBus(hub, 'g1')];
        const gateways = buses.map((bus) => new Harness(store, {}, undefined, undefined, () => bus));
        gateways.forEach((h, i) => void buses[i]!.start(h.gateway.cluster));
        const ws = gateways[0]!.gateway.createWorkspace('P', { 'a.ts': 'function a() {}\n' });
        const clients: FlintClient[] = placement.map((g) => gateways[g]!.client(ws.workspaceId, ws.owner.token));
        const flushAll = () => {
          for (let round = 0; round < 50; round++) {
            for (const h of gateways) h.flush();
            if (hub.deliver() === 0) {
              for (const h of gateways) h.flush();
              if (hub.deliver() === 0) return;
            }
          }
        };
        flushAll();
        const fileId = fileIdOf(clients[0]!, 'a.ts');
        const texts = clients.map((c) => textOf(c, fileId));
        flushAll();
        for (const s of steps) {
          const text = texts[s.client]!;
          if (s.insert || text.length === 0) text.insert(s.at % (text.length + 1), s.char);
          else text.delete(s.at % text.length, 1);
          for (const h of gateways) h.flush();
          hub.deliver(s.deliver);
          for (const h of gateways) h.flush();
          if (s.resync !== null) buses[s.resync]!.listener?.following(ws.workspaceId);
        }
        // The bus is reliable again and both gateways' connections come back.
        hub.drop = () => false;
        flushAll();
        for (const bus of buses) bus.listener?.following(ws.workspaceId);
        flushAll();
        const expected = texts[0]!.toString();
        for (const text of texts) expect(text.toString()).toBe(expected);
        for (const h of gateways) expect(h.gateway.document(ws.workspaceId, fileId)!.getText(FILE_TEXT_KEY).toString()).toBe(expected);
        // Every change was stored by the gateway that took it: a third gateway alone loads the same.
        const fresh = new Harness(store);
        expect(fresh.gateway.document(ws.workspaceId, fileId)!.getText(FILE_TEXT_KEY).toString()).toBe(expected);
        for (const c of clients) c.destroy();
      }),
      propertyParameters(60),
    );
  });
});

const revocationStep = fc.record({
  client: fc.nat({ max: 3 }),
  insert: fc.boolean(),
  at: fc.nat({ max: 999 }),
  deliver: fc.oneof(fc.constant(0), fc.constant(Infinity), fc.nat({ max: 6 })),
  /** One gateway's bus connection drops (a killed subscriber) or comes back. */
  disconnect: fc.option(fc.nat({ max: 1 }), { freq: 6 }),
  reconnect: fc.option(fc.nat({ max: 1 }), { freq: 6 }),
});

const revocationScenario = fc.record({
  placement: fc.tuple(fc.nat({ max: 1 }), fc.nat({ max: 1 }), fc.nat({ max: 1 }), fc.nat({ max: 1 })),
  /** Which clients hold the editor link that gets revoked (the others: the owner's). */
  editors: fc.tuple(fc.boolean(), fc.boolean(), fc.boolean(), fc.boolean()),
  dropRate: fc.constantFrom(0, 0.1, 0.4),
  steps: fc.array(revocationStep, { minLength: 1, maxLength: 60 }),
  revokeAt: fc.nat({ max: 59 }),
  revokeOn: fc.nat({ max: 1 }),
  seed: fc.integer(),
});

/** Lets the store questions the gateways asked in the background answer. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('a link revoked while the bus loses messages', () => {
  it('writes nothing once revoked: what its tabs send after the revocation is stored nowhere, whichever gateway missed the announcement', async () => {
    await fc.assert(
      fc.asyncProperty(revocationScenario, async ({ placement, editors, dropRate, steps, revokeAt, revokeOn, seed }) => {
        const hub = new MemoryHub();
        let rng = seed >>> 0;
        const random = () => ((rng = (Math.imul(rng, 1664525) + 1013904223) >>> 0) / 2 ** 32);
        hub.drop = () => random() < dropRate;
        const store = new SqliteStore(':memory:');
        const buses = [new MemoryBus(hub, 'g0'), new MemoryBus(hub, 'g1')];
        const gateways = buses.map((bus) => new Harness(store, {}, undefined, undefined, () => bus));
        gateways.forEach((h, i) => void buses[i]!.start(h.gateway.cluster));
        const ws = gateways[0]!.gateway.createWorkspace('P', { 'a.ts': 'function a() {}\n' });
        const shared = gateways[0]!.gateway.share(ws.workspaceId, ws.owner.token, { role: 'editor', label: 'Eve', expiresInMs: null });
        if (!shared.ok) throw new Error(shared.message);
        const clients = placement.map((g, i) => gateways[g]!.client(ws.workspaceId, editors[i] ? shared.value.token : ws.owner.token));
        const flushAll = () => {
          for (let round = 0; round < 50; round++) {
            for (const h of gateways) h.flush();
            if (hub.deliver() === 0) {
              for (const h of gateways) h.flush();
              if (hub.deliver() === 0) return;
            }
          }
        };
        flushAll();
        const fileId = fileIdOf(clients[0]!, 'a.ts');
        const texts = clients.map((c) => textOf(c, fileId));
        flushAll();
        let revoked = false;
        for (const [i, s] of steps.entries()) {
          if (s.disconnect !== null) buses[s.disconnect]!.disconnect();
          if (s.reconnect !== null) buses[s.reconnect]!.reconnect();
          await settle();
          if (i === revokeAt) {
            expect(gateways[revokeOn]!.gateway.revokeLink(ws.workspaceId, ws.owner.token, shared.value.link.id).ok).toBe(true);
            revoked = true;
            // Pub/sub is fast: a bus that is up hears the announcement now; one that is down never does.
            hub.deliver();
          }
          const text = texts[s.client]!;
          // What a revoked tab types is marked: it must reach no one and nowhere.
          const char = revoked && editors[s.client] ? 'X' : 'ab{};'[s.at % 5]!;
          if (s.insert || text.length === 0) text.insert(s.at % (text.length + 1), char);
          else text.delete(s.at % text.length, 1);
          for (const h of gateways) h.flush();
          hub.deliver(s.deliver);
          for (const h of gateways) h.flush();
        }
        hub.drop = () => false;
        for (const bus of buses) bus.reconnect();
        await settle();
        flushAll();
        for (const bus of buses) bus.listener?.following(ws.workspaceId);
        flushAll();
        const owners = texts.filter((_, i) => !editors[i]);
        for (const text of owners) expect(text.toString()).toBe(owners[0]!.toString());
        for (const text of owners) expect(text.toString()).not.toContain('X');
        for (const h of gateways) expect(h.gateway.document(ws.workspaceId, fileId)!.getText(FILE_TEXT_KEY).toString()).not.toContain('X');
        const fresh = new Harness(store);
        expect(fresh.gateway.document(ws.workspaceId, fileId)!.getText(FILE_TEXT_KEY).toString()).not.toContain('X');
        for (const c of clients) c.destroy();
      }),
      propertyParameters(60),
    );
  });
});

const faultStep = fc.record({
  client: fc.nat({ max: 3 }),
  insert: fc.boolean(),
  at: fc.nat({ max: 999 }),
  deliver: fc.oneof(fc.constant(0), fc.constant(Infinity), fc.nat({ max: 6 })),
  /** The shared database starts refusing appends or compactions, or answers again. */
  fault: fc.option(fc.constantFrom('appends' as const, 'compactions' as const, 'none' as const), { freq: 5 }),
});

const faultScenario = fc.record({
  placement: fc.tuple(fc.nat({ max: 1 }), fc.nat({ max: 1 }), fc.nat({ max: 1 }), fc.nat({ max: 1 })),
  dropRate: fc.constantFrom(0, 0.1, 0.4),
  steps: fc.array(faultStep, { maxLength: 60 }),
  seed: fc.integer(),
});

/**
 * SQLite shared by the gateways, whose appends or compactions fail while `failing` says so. A
 * compaction merges the gateway's state with the rows stored, as PostgresStore's does (SQLite's
 * own replaces them: one process, nobody else appends).
 */
function faultyStore(failing: { what: 'appends' | 'compactions' | 'none' }): Store {
  const inner = new SqliteStore(':memory:');
  return new Proxy(inner, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if ((key === 'appendUpdate' && failing.what === 'appends') || (key === 'compactDoc' && failing.what === 'compactions')) {
          throw new StoreError(`${String(key)}: the database does not answer`);
        }
        if (key === 'compactDoc') {
          const [docKey, merged] = args as [string, Uint8Array];
          return target.compactDoc(docKey, Y.mergeUpdates([...target.loadDoc(docKey).updates, merged]));
        }
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

describe('two gateways over an unreliable bus and a store that fails at times', () => {
  it('[I2] no edit a tab made is lost: refused appends drop the room and the tabs resend, failed compactions are retried; all converge and the store holds it', async () => {
    await fc.assert(
      fc.asyncProperty(faultScenario, async ({ placement, dropRate, steps, seed }) => {
        const hub = new MemoryHub();
        let rng = seed >>> 0;
        const random = () => ((rng = (Math.imul(rng, 1664525) + 1013904223) >>> 0) / 2 ** 32);
        hub.drop = () => random() < dropRate;
        const failing: { what: 'appends' | 'compactions' | 'none' } = { what: 'none' };
        const store = faultyStore(failing);
        const buses = [new MemoryBus(hub, 'g0'), new MemoryBus(hub, 'g1')];
        const gateways = buses.map((bus) => new Harness(store, { compactEveryUpdates: 4 }, undefined, undefined, () => bus));
        gateways.forEach((h, i) => void buses[i]!.start(h.gateway.cluster));
        const ws = gateways[0]!.gateway.createWorkspace('P', { 'a.ts': 'function a() {}\n' });
        const clients: FlintClient[] = placement.map((g) => gateways[g]!.client(ws.workspaceId, ws.owner.token, { minBackoffMs: 10, maxBackoffMs: 10 }));
        // A room whose append failed is dropped right after the update event (a microtask).
        const flushAll = async () => {
          for (let round = 0; round < 60; round++) {
            for (const h of gateways) h.flush();
            await settle();
            for (const h of gateways) h.clock.advance(20); // tabs closed with 4503 come back
            for (const h of gateways) h.flush();
            if (hub.deliver() === 0 && clients.every((c) => c.status.kind === 'open')) {
              for (const h of gateways) h.flush();
              if (hub.deliver() === 0) return;
            }
          }
        };
        await flushAll();
        const fileId = fileIdOf(clients[0]!, 'a.ts');
        const texts = clients.map((c) => textOf(c, fileId));
        await flushAll();
        for (const s of steps) {
          if (s.fault !== null) failing.what = s.fault;
          const text = texts[s.client]!;
          if (s.insert || text.length === 0) text.insert(s.at % (text.length + 1), 'ab{};'[s.at % 5]!);
          else text.delete(s.at % text.length, 1);
          for (const h of gateways) h.flush();
          await settle();
          hub.deliver(s.deliver);
          for (const h of gateways) {
            h.clock.advance(20);
            h.flush();
          }
          await settle();
        }
        failing.what = 'none';
        hub.drop = () => false;
        await flushAll();
        for (const bus of buses) bus.listener?.following(ws.workspaceId);
        await flushAll();
        for (const h of gateways) h.clock.advance(120_000); // failed compactions are retried
        await flushAll();
        const expected = texts[0]!.toString();
        for (const text of texts) expect(text.toString()).toBe(expected);
        const fresh = new Harness(store);
        expect(fresh.gateway.document(ws.workspaceId, fileId)!.getText(FILE_TEXT_KEY).toString()).toBe(expected);
        for (const c of clients) c.destroy();
      }),
      propertyParameters(40),
    );
  });
});
