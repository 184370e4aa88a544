import { hunksOf, type HunkRecord, type HunkStatus } from '@flint/change-set';
import { propertyParameters } from '@flint/test-kit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { RejectionHistory } from './RejectionHistory';

function record(turnId: string, seq: number, status: HunkStatus, original: string): HunkRecord {
  return { turnId, agentClient: 7, insertedFrom: seq * 10, insertedTo: seq * 10 + 5, original, restoreAt: {}, status, seq };
}

/** Two replicas of one file's doc, synced both ways at once. */
function replicas(): [Y.Doc, Y.Doc] {
  const a = new Y.Doc();
  const b = new Y.Doc();
  a.on('update', (update: Uint8Array, origin: unknown) => origin !== b && Y.applyUpdate(b, update, a));
  b.on('update', (update: Uint8Array, origin: unknown) => origin !== a && Y.applyUpdate(a, update, b));
  return [a, b];
}

const rejectedCount = (note: string) => Number(/rejected (\d+) of/.exec(note)?.[1]);

describe('RejectionHistory', () => {
  it('notes each turn with rejected hunks once, with their originals in hunk order, including records older than itself', () => {
    const doc = new Y.Doc();
    hunksOf(doc).set('h1', record('t1', 1, 'rejected', 'b'));
    hunksOf(doc).set('h0', record('t1', 0, 'rejected', 'a'));
    const history = new RejectionHistory(doc);
    hunksOf(doc).set('h2', record('t2', 0, 'accepted', 'x'));
    hunksOf(doc).set('h3', record('t3', 0, 'pending', 'y'));
    expect(history.notes()).toEqual(['Note: in an earlier turn the user rejected 2 of your changes and kept the original text (e.g. "ab"). Do not make that change again.']);
  });

  it('follows reviews made in another replica: a rejection appears, an undone one and a deleted record go', () => {
    const [gateway, browser] = replicas();
    const history = new RejectionHistory(gateway);
    hunksOf(browser).set('h0', record('t1', 0, 'pending', 'old'));
    expect(history.notes()).toEqual([]);
    hunksOf(browser).set('h0', record('t1', 0, 'rejected', 'old'));
    hunksOf(browser).set('h1', record('t2', 0, 'rejected', ''));
    expect(history.notes().map(rejectedCount)).toEqual([1, 1]);
    expect(history.notes()[1]).not.toContain('e.g.');
    hunksOf(browser).set('h0', record('t1', 0, 'pending', 'old'));
    expect(history.notes()).toHaveLength(1);
    hunksOf(browser).delete('h1');
    expect(history.notes()).toEqual([]);
  });

  it('keeps the five turns rejected last', () => {
    const doc = new Y.Doc();
    const history = new RejectionHistory(doc);
    for (let turn = 0; turn < 8; turn++) hunksOf(doc).set(`h${turn}`, record(`t${turn}`, 0, 'rejected', `turn ${turn};`));
    expect(history.notes().map((note) => /turn (\d);/.exec(note)?.[1])).toEqual(['3', '4', '5', '6', '7']);
  });

  it('after any reviews from two replicas, notes what a reading of every record finds', () => {
    const status = fc.constantFrom<HunkStatus>('pending', 'accepted', 'rejected');
    // Some records exist before the gateway loads the file.
    const before = fc.array(fc.record({ turnId: fc.constantFrom('t0', 't1'), status }), { minLength: 3, maxLength: 3 });
    const step = fc.record({
      replica: fc.constantFrom('gateway', 'browser'),
      hunk: fc.integer({ min: 0, max: 11 }),
      // A review sets a record; now and then one is deleted.
      review: fc.oneof({ arbitrary: fc.record({ turnId: fc.constantFrom('t0', 't1', 't2', 't3'), status }), weight: 85 }, { arbitrary: fc.constant('delete' as const), weight: 15 }),
    });
    fc.assert(
      // About 30 steps on average, down to none when shrinking.
      fc.property(before, fc.array(step, { maxLength: 60, size: 'max' }), (before, steps) => {
        const [gateway, browser] = replicas();
        before.forEach(({ turnId, status }, k) => hunksOf(browser).set(`h${k}`, record(turnId, k, status, `o${k}`)));
        const history = new RejectionHistory(gateway);
        for (const { replica, hunk, review } of steps) {
          const hunks = hunksOf(replica === 'gateway' ? gateway : browser);
          if (review === 'delete') hunks.delete(`h${hunk}`);
          else hunks.set(`h${hunk}`, record(review.turnId, hunk, review.status, `o${hunk}`));
        }
        // At most four turns: every turn with a rejection is noted, in whatever order.
        const expected = new Map<string, HunkRecord[]>();
        for (const r of hunksOf(gateway).values()) if (r.status === 'rejected') expected.set(r.turnId, [...(expected.get(r.turnId) ?? []), r]);
        const oracle = [...expected.values()].map((records) => {
          const original = records.sort((a, b) => a.seq - b.seq).map((r) => r.original).join('');
          return `Note: in an earlier turn the user rejected ${records.length} of your changes and kept the original text (e.g. ${JSON.stringify(original)}). Do not make that change again.`;
        });
        expect(history.notes().sort()).toEqual(oracle.sort());
      }),
      propertyParameters(200),
    );
  });
});
