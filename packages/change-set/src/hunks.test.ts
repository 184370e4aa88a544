import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { hunksOf, reviewHunks, textWithRejected, type HunkRecord } from './hunks';

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
      agentText.delete(edit.index, edit.from.length);
      const restoreAt = Y.relativePositionToJSON(Y.createRelativePositionFromTypeIndex(agentText, edit.index));
      const insertedFrom = Y.getState(agent.store, agentClient);
      agentText.insert(edit.index, edit.to);
      const record: HunkRecord = { turnId: edit.turnId, agentClient, insertedFrom, insertedTo: insertedFrom + edit.to.length, original: edit.from, restoreAt, status: 'pending', seq };
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
    expect(rest).toBe('let x = 51;\nlet y = 2;\nlet z = 30;\n');
    reviewHunks(doc, text, () => true, 'reject');
    expect(text.toString()).toBe(rest);
  });
});
