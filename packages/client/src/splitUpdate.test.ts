import { propertyConfig, seededRandom } from '@flint/test-kit';
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { splitUpdate } from './splitUpdate';

/** Applies pieces in order to a copy of `base`; fails if any piece leaves something pending. */
function applyPieces(base: Uint8Array, pieces: Uint8Array[]): Y.Doc {
  const doc = new Y.Doc();
  Y.applyUpdate(doc, base);
  for (const piece of pieces) {
    Y.applyUpdate(doc, piece);
    expect(doc.store.pendingStructs).toBeNull();
  }
  expect(doc.store.pendingDs).toBeNull();
  return doc;
}

const state = (doc: Y.Doc) => ({ text: doc.getText('t').toString(), map: doc.getMap('m').toJSON() });

describe('splitUpdate', () => {
  it('leaves an update that fits alone', () => {
    const doc = new Y.Doc();
    doc.getText('t').insert(0, 'hello');
    const update = Y.encodeStateAsUpdate(doc);
    expect(splitUpdate(update, 1_000)).toEqual([update]);
  });

  it('cuts one huge insert (a paste) into pieces under the limit, surrogate pairs kept whole', () => {
    const doc = new Y.Doc();
    const text = 'ab😀é\n'.repeat(50_000);
    doc.getText('t').insert(0, text);
    const update = Y.encodeStateAsUpdate(doc);
    const pieces = splitUpdate(update, 64 * 1024);
    expect(pieces.length).toBeGreaterThan(5);
    for (const piece of pieces) expect(piece.byteLength).toBeLessThanOrEqual(64 * 1024);
    expect(applyPieces(new Uint8Array([0, 0]), pieces).getText('t').toString()).toBe(text);
  });

  it('for any edits by several clients, the pieces applied in order give what the whole update gives', () => {
    const { seed, iterations } = propertyConfig(80);
    for (let run = 0; run < iterations; run++) {
      const runSeed = seed + run;
      const random = seededRandom(runSeed);
      const int = (n: number) => Math.floor(random() * n);
      try {
        const docs = Array.from({ length: 1 + int(3) }, (_, i) => {
          const doc = new Y.Doc();
          doc.clientID = 10 + i;
          return doc;
        });
        const base = new Y.Doc();
        base.getText('t').insert(0, 'base text\n');
        const baseUpdate = Y.encodeStateAsUpdate(base);
        for (const doc of docs) Y.applyUpdate(doc, baseUpdate);
        const sync = () => {
          for (const a of docs) for (const b of docs) if (a !== b) Y.applyUpdate(b, Y.encodeStateAsUpdate(a, Y.encodeStateVector(b)));
        };
        for (let step = 0, steps = 5 + int(120); step < steps; step++) {
          const doc = docs[int(docs.length)]!;
          const text = doc.getText('t');
          const roll = int(10);
          if (roll < 6) text.insert(int(text.length + 1), 'xyz😀\n'.slice(0, 1 + int(6)).repeat(1 + int(random() < 0.1 ? 400 : 3)));
          else if (roll < 8 && text.length > 0) {
            const at = int(text.length);
            text.delete(at, 1 + int(Math.min(5, text.length - at)));
          } else if (roll < 9) doc.getMap('m').set(`k${int(5)}`, int(100));
          else if (random() < 0.5) sync();
        }
        sync();
        const whole = Y.encodeStateAsUpdate(docs[0]!, Y.encodeStateVector(base));
        const maxBytes = 80 + int(400);
        const pieces = splitUpdate(whole, maxBytes);
        for (const piece of pieces) expect(piece.byteLength).toBeLessThanOrEqual(Math.max(maxBytes, 200));
        const expected = new Y.Doc();
        Y.applyUpdate(expected, baseUpdate);
        Y.applyUpdate(expected, whole);
        expect(state(applyPieces(baseUpdate, pieces))).toEqual(state(expected));
      } catch (error) {
        throw new Error(`splitUpdate property failed with SEED=${runSeed} ITERATIONS=1: ${String(error)}`);
      }
    }
  });
});
