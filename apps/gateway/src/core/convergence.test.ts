import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FlintClient } from '@flint/client';
import { FILE_TEXT_KEY } from '@flint/protocol';
import { propertyParameters } from '@flint/test-kit';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../storage/SqliteStore';
import { fileIdOf, Harness } from '../../test/testHarness';

const dir = mkdtempSync(join(tmpdir(), 'flint-convergence-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const alphabet = 'abc xyz{}();\n';

/** `true` with probability `p`; shrinks to `false`. */
const chance = (p: number) => fc.oneof({ arbitrary: fc.constant(false), weight: Math.round((1 - p) * 100) }, { arbitrary: fc.constant(true), weight: Math.round(p * 100) });

/** What happens in one step. Indices and offsets are taken modulo what they pick from. */
const action = fc.oneof(
  { arbitrary: fc.record({ type: fc.constant('insert' as const), at: fc.nat({ max: 999 }), char: fc.constantFrom(...alphabet), repeat: fc.integer({ min: 1, max: 3 }) }), weight: 55 },
  { arbitrary: fc.record({ type: fc.constant('delete' as const), at: fc.nat({ max: 999 }), length: fc.integer({ min: 1, max: 4 }) }), weight: 25 },
  // The socket drops (frames in flight are lost); the client reconnects with backoff.
  { arbitrary: fc.record({ type: fc.constant('disconnect' as const), socket: fc.nat({ max: 15 }) }), weight: 10 },
  { arbitrary: fc.constant({ type: 'restart' as const }), weight: 3 },
  { arbitrary: fc.constant({ type: 'nothing' as const }), weight: 7 },
);

const step = fc.record({
  client: fc.nat({ max: 3 }),
  action,
  flush: chance(0.5),
  applyBatched: chance(0.4),
  advanceMs: fc.oneof({ arbitrary: fc.constant(null), weight: 7 }, { arbitrary: fc.integer({ min: 0, max: 1999 }), weight: 3 }),
});

const scenario = fc.record({
  // 2–4 clients; some batch remote updates as the browser does (applied at random moments here).
  batches: fc.array(fc.boolean(), { minLength: 2, maxLength: 4, size: 'max' }),
  // Up to 120 steps, down to none when shrinking.
  steps: fc.array(step, { maxLength: 120, size: 'max' }),
});

type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

let runCount = 0;

/**
 * Several clients edit one file at random while their sockets drop and come back and the
 * gateway restarts on the same SQLite file. All replicas converge, and the document the gateway
 * persisted equals theirs after one more restart (Yjs applyRandomTests, over the real gateway).
 */
function runOnce({ batches, steps }: Scenario): void {
  const file = join(dir, `run-${runCount++}.sqlite`);
  const h = new Harness(new SqliteStore(file));
  const ws = h.gateway.createWorkspace('P', { 'a.ts': 'function a() {}\n' });
  const clients: FlintClient[] = [];
  const pending: Array<() => void> = [];
  const runPending = () => pending.splice(0).forEach((apply) => apply());
  batches.forEach((batch, i) => {
    const token = i === 0 ? ws.owner.token : h.gateway.links.create(ws.workspaceId, 'editor', `e${i}`, null).token;
    clients.push(h.client(ws.workspaceId, token, batch ? { scheduleRemoteApply: (apply) => void pending.push(apply) } : {}));
  });
  h.flush();
  const fileId = fileIdOf(clients[0]!, 'a.ts');
  const texts = clients.map((c) => c.openDoc(fileId).doc.getText(FILE_TEXT_KEY));
  h.flush();
  for (const { client, action, flush, applyBatched, advanceMs } of steps) {
    const text = texts[client % texts.length]!;
    if (action.type === 'insert') {
      text.insert(action.at % (text.length + 1), action.char.repeat(action.repeat));
    } else if (action.type === 'delete' && text.length > 0) {
      const at = action.at % text.length;
      text.delete(at, Math.min(action.length, text.length - at));
    } else if (action.type === 'disconnect') {
      const pair = h.net.pairs.filter((p) => !p.isClosed).at(action.socket % Math.max(1, h.net.pairs.length));
      pair?.disconnect(1006, 'network');
    } else if (action.type === 'restart') {
      h.store.close();
      h.restart(new SqliteStore(file));
    }
    if (flush) h.flush();
    if (applyBatched) runPending();
    if (advanceMs !== null) h.clock.advance(advanceMs);
  }
  h.settle(() => clients.every((c) => c.status.kind === 'open'));
  h.flush();
  runPending();
  const final = texts[0]!.toString();
  for (const text of texts) expect(text.toString()).toBe(final);
  for (const c of clients) c.destroy();
  h.store.close();
  h.restart(new SqliteStore(file));
  const reader = h.client(ws.workspaceId, ws.owner.token);
  h.flush();
  const persisted = reader.openDoc(fileId).doc.getText(FILE_TEXT_KEY);
  h.flush();
  expect(persisted.toString()).toBe(final);
  reader.destroy();
  h.store.close();
}

describe('convergence under random edits, disconnects and restarts', () => {
  it('all replicas and the persisted document converge', () => {
    fc.assert(fc.property(scenario, runOnce), propertyParameters(25));
  });
});
