import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FlintClient } from '@flint/client';
import { FILE_TEXT_KEY } from '@flint/protocol';
import { propertyConfig, seededRandom } from '@flint/test-kit';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../storage/SqliteStore';
import { fileIdOf, Harness } from './testHarness';

const { seed, iterations } = propertyConfig(25);
const dir = mkdtempSync(join(tmpdir(), 'flint-convergence-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Several clients edit one file at random while their sockets drop and come back and the
 * gateway restarts on the same SQLite file. All replicas converge, and the document the gateway
 * persisted equals theirs after one more restart (Yjs applyRandomTests, over the real gateway).
 */
function runOnce(runSeed: number, iteration: number): void {
  const random = seededRandom(runSeed);
  const pick = (n: number) => Math.floor(random() * n);
  const file = join(dir, `run-${runSeed}-${iteration}.sqlite`);
  const h = new Harness(new SqliteStore(file));
  const ws = h.gateway.createWorkspace('P', { 'a.ts': 'function a() {}\n' });
  const clients: FlintClient[] = [];
  // Some clients batch remote updates as the browser does (applied at random moments here).
  const pending: Array<() => void> = [];
  const runPending = () => pending.splice(0).forEach((apply) => apply());
  for (let i = 0; i < 2 + pick(3); i++) {
    const token = i === 0 ? ws.owner.token : h.gateway.links.create(ws.workspaceId, 'editor', `e${i}`, null).token;
    clients.push(h.client(ws.workspaceId, token, random() < 0.5 ? { scheduleRemoteApply: (apply) => void pending.push(apply) } : {}));
  }
  h.flush();
  const fileId = fileIdOf(clients[0]!, 'a.ts');
  const texts = clients.map((c) => c.openDoc(fileId).doc.getText(FILE_TEXT_KEY));
  h.flush();
  const alphabet = 'abc xyz{}();\n';
  for (let step = 0; step < 60; step++) {
    const i = pick(clients.length);
    const text = texts[i]!;
    const roll = random();
    if (roll < 0.55) {
      text.insert(pick(text.length + 1), alphabet[pick(alphabet.length)]!.repeat(1 + pick(3)));
    } else if (roll < 0.8 && text.length > 0) {
      const at = pick(text.length);
      text.delete(at, Math.min(1 + pick(4), text.length - at));
    } else if (roll < 0.9) {
      // The socket drops (frames in flight are lost); the client reconnects with backoff.
      const pair = h.net.pairs.filter((p) => !p.isClosed).at(pick(h.net.pairs.length));
      pair?.disconnect(1006, 'network');
    } else if (roll < 0.93) {
      h.store.close();
      h.restart(new SqliteStore(file));
    }
    if (random() < 0.5) h.flush();
    if (random() < 0.4) runPending();
    if (random() < 0.3) h.clock.advance(pick(2000));
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
  it(`all replicas and the persisted document converge (SEED=${seed} ITERATIONS=${iterations})`, () => {
    for (let iteration = 0; iteration < iterations; iteration++) {
      const runSeed = seed + iteration;
      try {
        runOnce(runSeed, iteration);
      } catch (error) {
        throw new Error(`convergence failed: replay with SEED=${runSeed} ITERATIONS=1\n${String(error)}`);
      }
    }
  });
});
