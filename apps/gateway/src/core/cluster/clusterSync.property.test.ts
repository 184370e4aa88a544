import type { FlintClient } from '@flint/client';
import { FILE_TEXT_KEY } from '@flint/protocol';
import { propertyParameters } from '@flint/test-kit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../../storage/SqliteStore';
import { fileIdOf, Harness, textOf } from '../testHarness';
import { MemoryBus, MemoryHub } from './MemoryBus';

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
