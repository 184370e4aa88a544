import { CloseCode, FILE_TEXT_KEY } from '@flint/protocol';
import type { FlintClient, WebSocketLike } from '@flint/client';
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { fileIdOf, Harness, hello, syncStep1Frame, textOf, updateFrame } from '../../test/testHarness';

/**
 * A Yjs client id a tab showed as its own and wrote with stays its link's after the document
 * leaves memory: an editor who writes under the owner's id at the clocks of her offline work
 * would make Yjs drop that work (found by the attack run, issue 31 follow-up).
 */
describe('[P4a] claims on client ids outlive the loaded document', () => {
  function aliceTyping(h: Harness, offline: { now: boolean }) {
    const ws = h.gateway.createWorkspace('W', { 'a.ts': 'const a = 1;\n' });
    const editor = h.gateway.links.create(ws.workspaceId, 'editor', 'Editor', null);
    const alice = h.client(ws.workspaceId, ws.owner.token, {
      createSocket: () => {
        const pair = h.openRaw();
        if (offline.now) pair.disconnect(1006, 'no network');
        return pair.client as unknown as WebSocketLike;
      },
    });
    h.flush();
    const fileId = fileIdOf(alice, 'a.ts');
    const aliceText = textOf(alice, fileId);
    h.flush();
    alice.openDoc(fileId).awareness.setLocalStateField('user', { id: 'alice-tab', name: 'Alice', color: '#ff0000' });
    h.flush();
    aliceText.insert(aliceText.length, 'line1\n');
    h.flush();
    return { ws, editor, alice, fileId, aliceText };
  }

  /** An editor's tab loads the doc and writes "EVIL" under Alice's client id; its close code. */
  function squat(h: Harness, workspaceId: string, token: string, fileId: string, alice: FlintClient): number | null {
    const pair = h.openRaw();
    hello(pair, workspaceId, token);
    h.flush();
    pair.client.send(syncStep1Frame(fileId));
    h.flush();
    const server = h.gateway.document(workspaceId, fileId)!;
    const doc = new Y.Doc();
    Y.applyUpdate(doc, Y.encodeStateAsUpdate(server));
    doc.clientID = alice.openDoc(fileId).doc.clientID;
    const before = Y.encodeStateVector(doc);
    doc.getText(FILE_TEXT_KEY).insert(0, 'EVIL\n');
    pair.client.send(updateFrame(fileId, Y.encodeStateAsUpdate(doc, before)));
    h.flush();
    return pair.closeCode;
  }

  it('after the room unloaded while the owner was offline', () => {
    const h = new Harness();
    const offline = { now: false };
    const { ws, editor, alice, fileId, aliceText } = aliceTyping(h, offline);
    offline.now = true;
    h.net.pairs.filter((p) => !p.isClosed).forEach((p) => p.disconnect(1006, 'no network'));
    aliceText.insert(aliceText.length, 'MY OFFLINE WORK\n');
    for (let i = 0; i < 40; i++) {
      h.flush();
      h.clock.advance(1000); // past idleUnloadMs: the room unloads
    }
    expect(squat(h, ws.workspaceId, editor.token, fileId, alice)).toBe(CloseCode.OutOfSync);
    offline.now = false;
    for (let i = 0; i < 100; i++) {
      h.flush();
      h.clock.advance(200);
    }
    const server = h.gateway.document(ws.workspaceId, fileId)?.getText(FILE_TEXT_KEY).toString();
    expect({ alice: alice.status.kind, server, text: aliceText.toString() }).toEqual({
      alice: 'open',
      server: 'const a = 1;\nline1\nMY OFFLINE WORK\n',
      text: 'const a = 1;\nline1\nMY OFFLINE WORK\n',
    });
  });

  it('after a gateway restart', () => {
    const h = new Harness();
    const { ws, editor, alice, fileId, aliceText } = aliceTyping(h, { now: false });
    h.restart(); // a deploy: Alice keeps typing while her tab reconnects
    aliceText.insert(aliceText.length, 'MY OFFLINE WORK\n');
    expect(squat(h, ws.workspaceId, editor.token, fileId, alice)).toBe(CloseCode.OutOfSync);
    h.settle(() => alice.status.kind === 'open');
    for (let i = 0; i < 50; i++) {
      h.flush();
      h.clock.advance(100);
    }
    const server = h.gateway.document(ws.workspaceId, fileId)?.getText(FILE_TEXT_KEY).toString();
    expect({ server, text: aliceText.toString() }).toEqual({ server: 'const a = 1;\nline1\nMY OFFLINE WORK\n', text: 'const a = 1;\nline1\nMY OFFLINE WORK\n' });
  });

  it('the owner herself writes under her id again after the restart', () => {
    const h = new Harness();
    const { ws, alice, fileId, aliceText } = aliceTyping(h, { now: false });
    h.restart();
    h.settle(() => alice.status.kind === 'open');
    aliceText.insert(aliceText.length, 'after\n');
    for (let i = 0; i < 20; i++) {
      h.flush();
      h.clock.advance(100);
    }
    expect(alice.status.kind).toBe('open');
    expect(h.gateway.document(ws.workspaceId, fileId)?.getText(FILE_TEXT_KEY).toString()).toBe('const a = 1;\nline1\nafter\n');
  });
});
