import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { idRunsOf } from './idRanges';
import { hunksOf, isHunkRecord, isRelativePositionJson, reviewHunks, textWithRejected, type HunkRecord } from './hunks';

const key = 'content';
const agentClient = 4242;

/** A doc whose agent (its own Yjs client, as on the gateway) replaced text, one hunk per edit. */
function docWithHunks(content: string, edits: Array<{ hunkId: string; turnId: string; index: number; from: string; to: string }>) {
  const doc = new Y.Doc();
  const text = doc.getText(key);
  text.insert(0, content);
  const agent = new Y.Doc();
  agent.clientID = agentClient;
  Y.applyUpdate(agent, Y.encodeStateAsUpdate(doc));
  const agentText = agent.getText(key);
  edits.forEach((edit, seq) => {
    agent.transact(() => {
      const removed = idRunsOf(agentText, edit.index, edit.index + edit.from.length);
      agentText.delete(edit.index, edit.from.length);
      const restoreAt = Y.relativePositionToJSON(Y.createRelativePositionFromTypeIndex(agentText, edit.index));
      const insertedFrom = Y.getState(agent.store, agentClient);
      agentText.insert(edit.index, edit.to);
      const record: HunkRecord = { turnId: edit.turnId, agentClient, insertedFrom, insertedTo: insertedFrom + edit.to.length, original: edit.from, removed, restoreAt, status: 'pending', seq };
      hunksOf(agent).set(edit.hunkId, record);
    });
  });
  Y.applyUpdate(doc, Y.encodeStateAsUpdate(agent, Y.encodeStateVector(doc)));
  return { doc, text };
}

describe('textWithRejected', () => {
  it('reads as the text before the agent, and leaves the document and its hunks as they were', () => {
    const { doc, text } = docWithHunks('const a = 1;\nconst b = 2;\n', [
      { hunkId: 'h1', turnId: 't1', index: 10, from: '1', to: 'one' },
      { hunkId: 'h2', turnId: 't1', index: 25, from: '2', to: 'two' },
    ]);
    expect(text.toString()).toBe('const a = one;\nconst b = two;\n');
    expect(textWithRejected(doc, key)).toBe('const a = 1;\nconst b = 2;\n');
    expect(text.toString()).toBe('const a = one;\nconst b = two;\n');
    expect([...hunksOf(doc).values()].map((r) => r.status)).toEqual(['pending', 'pending']);
  });

  it('is exactly what Reject then leaves, a person\'s typing inside a hunk included; only the chosen pending hunks count', () => {
    const { doc, text } = docWithHunks('let x = 1;\nlet y = 2;\nlet z = 3;\n', [
      { hunkId: 'h1', turnId: 't1', index: 8, from: '1', to: '10' },
      { hunkId: 'h2', turnId: 't2', index: 20, from: '2', to: '20' },
      { hunkId: 'h3', turnId: 't2', index: 32, from: '3', to: '30' },
    ]);
    text.insert(9, '5'); // a person types inside h1's "10"
    reviewHunks(doc, text, (id) => id === 'h3', 'accept');
    const predicted = textWithRejected(doc, key, (_id, record) => record.turnId === 't2');
    expect(predicted).toBe('let x = 150;\nlet y = 2;\nlet z = 30;\n');
    reviewHunks(doc, text, (_id, record) => record.turnId === 't2', 'reject');
    expect(text.toString()).toBe(predicted);
    // The original goes back where it was removed, beside the person's '5', which stays.
    const rest = textWithRejected(doc, key);
    expect(rest).toBe('let x = 15;\nlet y = 2;\nlet z = 30;\n');
    reviewHunks(doc, text, () => true, 'reject');
    expect(text.toString()).toBe(rest);
  });
});

describe('rejecting hunks that rewrote each other', () => {
  // A second patch (or the patch after a steer) rewrites a line the first one wrote.
  const nested = () =>
    docWithHunks('a\nb\nc\n', [
      { hunkId: 't1.0', turnId: 't1', index: 2, from: 'b', to: 'half' },
      { hunkId: 't1.1', turnId: 't1', index: 2, from: 'half', to: 'whole' },
    ]);

  it('Reject all gives back the text before both, with what a person typed meanwhile', () => {
    const { doc, text } = nested();
    expect(text.toString()).toBe('a\nwhole\nc\n');
    text.insert(0, 'X');
    expect(reviewHunks(doc, text, () => true, 'reject')).toBe(2);
    expect(text.toString()).toBe('Xa\nb\nc\n');
  });

  it('rejecting the later hunk, then the earlier one, ends where rejecting both at once does', () => {
    const { doc, text } = nested();
    reviewHunks(doc, text, (id) => id === 't1.1', 'reject');
    expect(text.toString()).toBe('a\nhalf\nc\n');
    // The put-back "half" stands for the first hunk's text: rejecting it removes that too.
    expect(hunksOf(doc).get('t1.0')!.restored).toHaveLength(1);
    reviewHunks(doc, text, (id) => id === 't1.0', 'reject');
    expect(text.toString()).toBe('a\nb\nc\n');
  });

  it('rejecting a later turn, then an earlier one whose removal sat between its own, puts every line back in order', () => {
    const { doc, text } = docWithHunks('a\nb\nc\nd\n', [
      { hunkId: 't1.0', turnId: 't1', index: 2, from: 'b\n', to: '' },
      { hunkId: 't2.0', turnId: 't2', index: 0, from: 'a\nc\n', to: 'X\n' },
    ]);
    expect(text.toString()).toBe('X\nd\n');
    reviewHunks(doc, text, (_id, record) => record.turnId === 't2', 'reject');
    expect(text.toString()).toBe('a\nc\nd\n');
    reviewHunks(doc, text, (_id, record) => record.turnId === 't1', 'reject');
    expect(text.toString()).toBe('a\nb\nc\nd\n');
  });

  it('a hunk still being written is neither accepted nor rejected', () => {
    const { doc, text } = nested();
    hunksOf(doc).set('t1.1', { ...hunksOf(doc).get('t1.1')!, writing: true });
    expect(reviewHunks(doc, text, () => true, 'accept')).toBe(1);
    expect(hunksOf(doc).get('t1.1')!.status).toBe('pending');
  });

  it('records are checked: removed ids must cover the original exactly', () => {
    const record = hunksOf(nested().doc).get('t1.1')!;
    expect(isHunkRecord(record)).toBe(true);
    expect(isHunkRecord({ ...record, removed: [{ client: 1, clock: 0, length: 1 }] })).toBe(false);
    expect(isHunkRecord({ ...record, restored: [{ client: 1, clock: 'x', length: 1 }] })).toBe(false);
    expect(isHunkRecord({ ...record, writing: 'yes' })).toBe(false);
  });
});

describe('isRelativePositionJson', () => {
  it('refuses a position Yjs cannot resolve (no item, no type, no root name): a reject would throw for everyone', () => {
    expect(isRelativePositionJson({ foo: 1 })).toBe(false);
    expect(isRelativePositionJson({ assoc: 0 })).toBe(false);
    expect(isRelativePositionJson({ tname: 'content', item: null, assoc: 0 })).toBe(true);
    expect(isRelativePositionJson({ item: { client: 1, clock: 2 }, assoc: -1 })).toBe(true);
  });
});
