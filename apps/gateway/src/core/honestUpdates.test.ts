import type { FlintClient } from '@flint/client';
import { seededRandom } from '@flint/test-kit';
import { FILE_TEXT_KEY } from '@flint/protocol';
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { checkUpdate, FILE_DOC_SCHEMA, ItemOrder } from './checkUpdate';
import { defaultConfig } from './GatewayConfig';
import { fileIdOf, Harness, textOf } from '../../test/testHarness';

/**
 * [I1] No honest work is refused (DESIGN §11.1): the largest updates an ordinary client makes —
 * a paste of a 10,000-line file, an hour of typing offline — are accepted whole, next to the
 * patterns that used to cost the update check n²/2 steps.
 */

/** Alice with a.ts open on a gateway, and Bob watching it. */
function open(initial: string, config: ConstructorParameters<typeof Harness>[1] = {}) {
  const h = new Harness(undefined, config);
  const ws = h.gateway.createWorkspace('Honest', { 'a.ts': initial });
  const [alice, bob] = [0, 1].map(() => h.client(ws.workspaceId, ws.owner.token, { minBackoffMs: 10, maxBackoffMs: 10 })) as [FlintClient, FlintClient];
  h.flush();
  const fileId = fileIdOf(alice, 'a.ts');
  const [ta, tb] = [textOf(alice, fileId), textOf(bob, fileId)];
  h.flush();
  expect(ta.toString()).toBe(initial);
  const offline = () => {
    for (const pair of h.net.pairs) if (pair === h.net.pairs[0]) pair.disconnect(1006, 'offline');
    h.flush();
    expect(alice.status.kind).not.toBe('open');
  };
  const storedText = () => {
    h.restart();
    const carol = h.client(ws.workspaceId, ws.owner.token);
    h.settle(() => carol.status.kind === 'open' && fileIdOf(carol, 'a.ts') !== '');
    const text = textOf(carol, fileIdOf(carol, 'a.ts'));
    h.settle(() => text.length > 0);
    return text.toString();
  };
  return { h, alice, bob, ta, tb, offline, storedText };
}

const rngOf = (seed: number) => {
  const next = seededRandom(seed);
  return { int: (n: number) => Math.floor(next() * n) };
};
const lines = (count: number, make: (i: number) => string) => Array.from({ length: count }, (_, i) => make(i)).join('');
const original = lines(200, (i) => `export const v${i} = ${i};\n`);

describe('[I1] honest updates the gateway accepts whole', () => {
  it('one transaction that inserts 450 lines at the top, one line at a time, bottom first', () => {
    const { h, alice, ta, tb, storedText } = open(original);
    ta.doc!.transact(() => {
      for (let i = 449; i >= 0; i--) ta.insert(0, `import { x${i} } from './m${i}';\n`);
    });
    h.flush();
    expect(alice.status.kind).toBe('open');
    expect(tb.toString()).toBe(ta.toString());
    expect(storedText()).toBe(ta.toString());
  });

  it('a paste of a 10,000-line file in one edit', () => {
    const { h, alice, ta, tb, storedText } = open('');
    const file = lines(10_000, (i) => `  const line${i} = compute(${i}, "${'x'.repeat(i % 40)}");\n`);
    expect(file.length).toBeGreaterThan(400_000);
    ta.insert(0, file);
    h.flush();
    expect(alice.status.kind).toBe('open');
    expect(tb.toString()).toBe(file);
    expect(storedText()).toBe(file);
  });

  it('a paste larger than one frame is sent in pieces and accepted (never a final close)', () => {
    const { h, alice, ta, tb, storedText } = open('');
    const file = lines(24_000, (i) => `  const line${i} = compute(${i}, "${'é'.repeat(i % 20)}");\n`);
    expect(new TextEncoder().encode(file).byteLength).toBeGreaterThan(1024 * 1024);
    ta.insert(0, file);
    h.flush();
    expect(alice.status.kind).toBe('open');
    expect(tb.toString()).toBe(file);
    expect(storedText()).toBe(file);
  });

  it('pasting a large block and clearing it, again and again, never fills the document limit of a file that stays small', () => {
    const { h, alice, ta, tb, storedText } = open('', { limits: { ...defaultConfig.limits, maxDocBytes: 400_000 } });
    const block = lines(3_000, (i) => `  const line${i} = ${i};\n`);
    for (let round = 0; round < 5; round++) {
      ta.insert(0, block);
      h.flush();
      ta.delete(0, ta.length);
      h.flush();
      expect(alice.status.kind).toBe('open');
    }
    ta.insert(0, block);
    h.flush();
    expect(alice.status.kind).toBe('open');
    expect(tb.toString()).toBe(block);
    expect(storedText()).toBe(block);
  });

  it('reconnecting after adding 600 import lines offline, each its own transaction, at the top or below the last', () => {
    const { h, alice, ta, tb, offline, storedText } = open(original);
    offline();
    let at = 0;
    for (let i = 0; i < 600; i++) {
      const line = `import { thing${i} } from '../lib/thing${i}';\n`;
      if (i % 2 === 0) ta.insert(0, line); // an auto-import puts it at the very top
      else ta.insert(at, line);
      at += line.length;
    }
    h.settle(() => alice.status.kind === 'open' && tb.toString() === ta.toString());
    expect(ta.toString().length).toBeGreaterThan(18_000);
    expect(storedText()).toBe(ta.toString());
  });

  it('reconnecting after typing offline with 600 Backspace corrections', () => {
    const { h, alice, ta, tb, offline, storedText } = open(original);
    offline();
    const rng = rngOf(31);
    let at = 0;
    for (let i = 0; i < 3_300; i++) {
      ta.insert(at, String.fromCharCode(97 + rng.int(26)));
      at++;
      if (i % 5 === 4 && i < 3_000) {
        ta.delete(at - 1, 1); // a typo, corrected at once
        at--;
      }
    }
    h.settle(() => alice.status.kind === 'open' && tb.toString() === ta.toString());
    expect(storedText()).toBe(ta.toString());
  });

  it('reconnecting after an hour of offline typing all over the file (12,000 keystrokes, 10% Backspace)', () => {
    const { h, alice, ta, tb, offline, storedText } = open(original);
    offline();
    const rng = rngOf(7);
    let at = 0;
    for (let i = 0; i < 12_000; i++) {
      if (rng.int(40) === 0) at = rng.int(ta.length + 1); // the cursor moves somewhere else
      if (rng.int(10) === 0 && at > 0) {
        ta.delete(at - 1, 1);
        at--;
      } else {
        ta.insert(at, rng.int(8) === 0 ? '\n' : String.fromCharCode(97 + rng.int(26)));
        at++;
      }
    }
    h.settle(() => alice.status.kind === 'open' && tb.toString() === ta.toString());
    expect(storedText()).toBe(ta.toString());
  });
});

describe('[I1] the update check is linear in the update and the document', () => {
  /** "ab" with `n` concurrent one-letter inserts between a and b, each from its own client. */
  function concurrentInserts(n: number, base: Y.Doc): Uint8Array[] {
    return Array.from({ length: n }, (_, i) => {
      const copy = new Y.Doc();
      copy.clientID = 1_000 + i + (base.clientID % 7) * 100_000;
      Y.applyUpdate(copy, Y.encodeStateAsUpdate(base));
      const before = Y.encodeStateVector(copy);
      copy.getText(FILE_TEXT_KEY).insert(1, 'x');
      return Y.encodeStateAsUpdate(copy, before);
    });
  }

  it('a thousand clients inserting at the same place, behind a thousand others: accepted, in a bounded number of steps', () => {
    const base = new Y.Doc();
    base.clientID = 1;
    base.getText(FILE_TEXT_KEY).insert(0, 'ab');
    const doc = new Y.Doc();
    Y.applyUpdate(doc, Y.encodeStateAsUpdate(base));
    for (const update of concurrentInserts(1_000, base)) Y.applyUpdate(doc, update);
    base.clientID = 2; // a second thousand clients, from the same "ab"
    const late = Y.mergeUpdates(concurrentInserts(1_000, base));
    expect(checkUpdate(doc, late, FILE_DOC_SCHEMA).ok).toBe(true);

    const order = new ItemOrder(doc);
    const [a, b] = [Y.createID(1, 0), Y.createID(1, 1)];
    for (let i = 0; i < 1_000; i++) expect(order.precedes(FILE_TEXT_KEY, a, b)).toBe(true);
    // One numbering of the ~1,002 items plus a short walk per question, not 1,000 × 1,000.
    expect(order.steps).toBeLessThan(1_002 + 1_000 * 20);
    expect(order.precedes(FILE_TEXT_KEY, b, a)).toBe(false);
  });
});
