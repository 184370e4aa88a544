import { hunksOf, reviewHunks, viewHunks, type HunkRecord } from '@flint/change-set';
import { REVIEW_ORIGIN } from '@flint/client';
import { FILE_TEXT_KEY } from '@flint/protocol';
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { caretAfter, FileUndo } from './FileUndo';

/** Stands in for the y-monaco binding: the origin of this tab's typing. */
const binding = { name: 'binding' };
const agentClient = 4242;

function setup(content: string) {
  const doc = new Y.Doc();
  const text = doc.getText(FILE_TEXT_KEY);
  text.insert(0, content);
  const undo = new FileUndo(doc, text);
  undo.track(binding);
  const type = (index: number, chars: string) => doc.transact(() => text.insert(index, chars), binding);
  /** Another peer's update, arriving as the client applies it (an untracked origin). */
  const receive = (edit: (peer: Y.Doc) => void, clientId = 777) => {
    const peer = new Y.Doc();
    peer.clientID = clientId;
    Y.applyUpdate(peer, Y.encodeStateAsUpdate(doc));
    const before = Y.encodeStateVector(peer);
    edit(peer);
    Y.applyUpdate(doc, Y.encodeStateAsUpdate(peer, before), 'remote');
  };
  /** The agent replaces `from` with `to` at `index`, recording a pending hunk, as the gateway does. */
  const agentReplaces = (index: number, from: string, to: string) =>
    receive((peer) => {
      const peerText = peer.getText(FILE_TEXT_KEY);
      peer.transact(() => {
        peerText.delete(index, from.length);
        const restoreAt = Y.relativePositionToJSON(Y.createRelativePositionFromTypeIndex(peerText, index));
        const insertedFrom = Y.getState(peer.store, agentClient);
        peerText.insert(index, to);
        const record: HunkRecord = {
          turnId: 't1',
          agentClient,
          insertedFrom,
          insertedTo: insertedFrom + to.length,
          original: from,
          restoreAt,
          status: 'pending',
          seq: 0,
        };
        hunksOf(peer).set('h1', record);
      });
    }, agentClient);
  const status = () => hunksOf(doc).get('h1')?.status;
  /** Where the hunk's inserted text is now, as the editor would highlight it. */
  const highlighted = () => viewHunks(doc, text).flatMap((view) => view.inserted.map((r) => text.toString().slice(r.index, r.index + r.length)));
  return { doc, text, undo, type, receive, agentReplaces, status, highlighted };
}

describe('FileUndo', () => {
  it('undoes this tab\'s typing and leaves a collaborator\'s text alone', () => {
    const { text, undo, type, receive } = setup('let a = 1;\n');
    type(0, '// mine\n');
    receive((peer) => peer.getText(FILE_TEXT_KEY).insert(peer.getText(FILE_TEXT_KEY).length, '// theirs\n'));
    expect(undo.undo()).toBe(0);
    expect(text.toString()).toBe('let a = 1;\n// theirs\n');
    undo.redo();
    expect(text.toString()).toBe('// mine\nlet a = 1;\n// theirs\n');
  });

  it('never undoes the agent\'s stream', () => {
    const { text, undo, agentReplaces } = setup('let a = 1;\n');
    agentReplaces(8, '1', '2');
    expect(undo.canUndo()).toBe(false);
    expect(undo.undo()).toBeNull();
    expect(text.toString()).toBe('let a = 2;\n');
  });

  it('makes a reject one undo step of its own, even right after typing, and undo puts the hunk back to pending', () => {
    const { doc, text, undo, type, agentReplaces, status } = setup('let a = 1;\n');
    agentReplaces(8, '1', '2');
    type(0, 'x');
    expect(reviewHunks(doc, text, () => true, 'reject', REVIEW_ORIGIN)).toBe(1);
    expect(text.toString()).toBe('xlet a = 1;\n');
    expect(status()).toBe('rejected');

    undo.undo();
    expect(text.toString()).toBe('xlet a = 2;\n');
    expect(status()).toBe('pending');
    undo.undo();
    expect(text.toString()).toBe('let a = 2;\n');

    undo.redo();
    undo.redo();
    expect(text.toString()).toBe('xlet a = 1;\n');
    expect(status()).toBe('rejected');
  });

  it('after undoing a reject the hunk is highlighted and reviewable again, through any number of undo/redo rounds', () => {
    const { doc, text, undo, agentReplaces, status, highlighted } = setup('let a = 1;\n');
    agentReplaces(8, '1', '42');
    const reject = () => reviewHunks(doc, text, () => true, 'reject', REVIEW_ORIGIN);
    expect(reject()).toBe(1);
    for (let round = 0; round < 3; round++) {
      undo.undo();
      expect(text.toString()).toBe('let a = 42;\n');
      expect(status()).toBe('pending');
      expect(highlighted()).toEqual(['42']);
      undo.redo();
      expect(text.toString()).toBe('let a = 1;\n');
      expect(status()).toBe('rejected');
    }
    undo.undo();
    expect(reject()).toBe(1);
    expect(text.toString()).toBe('let a = 1;\n');
  });

  it('re-points every hunk of a reject-all, also hunks the agent wrote over several flushes', () => {
    const { doc, text, undo, receive, highlighted } = setup('one two three\n');
    const write = (peer: Y.Doc, hunkId: string, seq: number, index: number, chars: string, from: number) => {
      const peerText = peer.getText(FILE_TEXT_KEY);
      const restoreAt = Y.relativePositionToJSON(Y.createRelativePositionFromTypeIndex(peerText, index));
      peerText.insert(index, chars);
      const record: HunkRecord = { turnId: 't1', agentClient, insertedFrom: from, insertedTo: Y.getState(peer.store, agentClient), original: '', restoreAt, status: 'pending', seq };
      hunksOf(peer).set(hunkId, record);
    };
    receive((peer) => {
      const from = Y.getState(peer.store, agentClient);
      peer.transact(() => write(peer, 'a', 0, 0, 'ZE', from));
      // The next flush extends the same hunk: its clock range now spans the record written between.
      peer.transact(() => write(peer, 'a', 0, 2, 'RO ', from));
      const second = Y.getState(peer.store, agentClient);
      peer.transact(() => write(peer, 'b', 1, 12, '!', second));
    }, agentClient);
    expect(text.toString()).toBe('ZERO one two! three\n');
    reviewHunks(doc, text, () => true, 'reject', REVIEW_ORIGIN);
    expect(text.toString()).toBe('one two three\n');
    undo.undo();
    expect(highlighted()).toEqual(['ZERO ', '!']);
    reviewHunks(doc, text, () => true, 'reject', REVIEW_ORIGIN);
    expect(text.toString()).toBe('one two three\n');
  });

  it('makes an accept one undo step that puts the hunk back to pending and the text as it is', () => {
    const { doc, text, undo, agentReplaces, status } = setup('let a = 1;\n');
    agentReplaces(8, '1', '2');
    reviewHunks(doc, text, () => true, 'accept', REVIEW_ORIGIN);
    expect(status()).toBe('accepted');
    expect(undo.undo()).toBeNull();
    expect(status()).toBe('pending');
    expect(text.toString()).toBe('let a = 2;\n');
  });
});

describe('caretAfter', () => {
  it('lands after the first insert, or where the first delete was', () => {
    expect(caretAfter([{ retain: 4 }, { insert: 'abc' }])).toBe(7);
    expect(caretAfter([{ retain: 2 }, { delete: 3 }, { insert: 'x' }])).toBe(2);
    expect(caretAfter([])).toBeNull();
  });
});
