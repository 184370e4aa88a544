import { HUNKS_KEY } from '@flint/change-set';
import { Channel, CloseCode, encodeDocFrame, FILE_TEXT_KEY } from '@flint/protocol';
import { encodeDecodedUpdate, type MemorySocketPair } from '@flint/test-kit';
import * as encoding from 'lib0/encoding';
import * as awarenessProtocol from 'y-protocols/awareness';
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { SqliteStore } from '../storage/SqliteStore';
import { nameKey } from './peerPresence';
import { fileIdOf, Harness, hello, syncStep1Frame, textOf, updateFrame } from '../../test/testHarness';

/**
 * One test per way a participant with a link has tried to break other people or their
 * documents (issue 20). Each checks the close code, that the document is untouched, and that an
 * honest pair in the room goes on as if nothing happened.
 */
function room() {
  const h = new Harness();
  const ws = h.gateway.createWorkspace('Hostile', { 'a.ts': 'const a = 1;\n' });
  const editor = h.gateway.links.create(ws.workspaceId, 'editor', 'Editor', null);
  const viewer = h.gateway.links.create(ws.workspaceId, 'viewer', 'Viewer', null);
  const alice = h.client(ws.workspaceId, ws.owner.token);
  h.flush();
  const fileId = fileIdOf(alice, 'a.ts');
  const aliceText = textOf(alice, fileId);
  const bob = h.client(ws.workspaceId, editor.token);
  h.flush();
  const bobText = textOf(bob, fileId);
  h.flush();
  const serverText = () => h.gateway.document(ws.workspaceId, fileId)!.getText(FILE_TEXT_KEY).toString();
  /** The honest pair still converges, and a fresh reader loads the file whole. */
  const honestStillWork = () => {
    aliceText.insert(aliceText.length, '// alice\n');
    bobText.insert(0, '// bob\n');
    h.flush();
    expect(alice.status.kind).toBe('open');
    expect(bob.status.kind).toBe('open');
    expect(bobText.toString()).toBe(aliceText.toString());
    expect(aliceText.toString()).toContain('// alice');
    const reader = h.client(ws.workspaceId, viewer.token);
    h.flush();
    const seen = textOf(reader, fileId);
    h.flush();
    expect(seen.toString()).toBe(aliceText.toString());
    expect(alice.faultCount + bob.faultCount + reader.faultCount).toBe(0);
    reader.destroy();
  };
  const raw = (token: string): MemorySocketPair => {
    const pair = h.openRaw();
    hello(pair, ws.workspaceId, token);
    h.flush();
    pair.client.send(syncStep1Frame(fileId));
    h.flush();
    return pair;
  };
  return { h, ws, editor, viewer, alice, bob, aliceText, fileId, serverText, honestStillWork, raw };
}

/** An update that writes into the file as a peer with its own doc, synced to the gateway's. */
function peerEdit(base: Y.Doc, edit: (doc: Y.Doc) => void): Uint8Array {
  const doc = new Y.Doc();
  Y.applyUpdate(doc, Y.encodeStateAsUpdate(base));
  const before = Y.encodeStateVector(doc);
  edit(doc);
  return Y.encodeStateAsUpdate(doc, before);
}

function awarenessFrame(docId: string, entries: Array<[number, number, string]>): Uint8Array {
  const encoder = encoding.createEncoder();
  encoding.writeVarUint(encoder, entries.length);
  for (const [clientId, clock, state] of entries) {
    encoding.writeVarUint(encoder, clientId);
    encoding.writeVarUint(encoder, clock);
    encoding.writeVarString(encoder, state);
  }
  return encodeDocFrame(Channel.Awareness, docId, encoding.toUint8Array(encoder));
}

describe('hostile peers: nothing one participant sends breaks another or a document', () => {
  it('[P4] an update that fails to decode halfway changes nothing, not even what decoded first', () => {
    const { h, ws, editor, fileId, serverText, honestStillWork, raw } = room();
    const before = serverText();
    const server = h.gateway.document(ws.workspaceId, fileId)!;
    // Two clients' worth of structs, then the bytes cut inside the second client's strings.
    const a = peerEdit(server, (d) => d.getText(FILE_TEXT_KEY).insert(0, 'junk '.repeat(400)));
    const b = peerEdit(server, (d) => d.getText(FILE_TEXT_KEY).insert(0, 'more '.repeat(400)));
    const merged = Y.mergeUpdates([a, b]);
    const cut = merged.slice(0, Math.floor(merged.length * 0.75));
    const pair = raw(editor.token);
    pair.client.send(updateFrame(fileId, cut));
    h.flush();
    expect(pair.closeCode).toBe(CloseCode.MalformedFrame);
    expect(serverText()).toBe(before);
    honestStillWork();
  });

  it('[P4] writes outside the file\'s schema are refused whole: other roots, embeds, formats, nested types, bad hunk records', () => {
    const { h, editor, fileId, serverText, honestStillWork, raw, ws } = room();
    const server = h.gateway.document(ws.workspaceId, fileId)!;
    const attacks: Array<(d: Y.Doc) => void> = [
      (d) => d.getText('evil').insert(0, 'x'),
      (d) => d.getText(FILE_TEXT_KEY).insertEmbed(0, { image: 'x' }),
      (d) => d.getText(FILE_TEXT_KEY).format(0, 3, { bold: true }),
      (d) => d.getText(FILE_TEXT_KEY).insert(0, 'ok', { bold: true }),
      (d) => d.getMap(HUNKS_KEY).set('h1', new Y.Text('nested')),
      (d) => d.getMap(HUNKS_KEY).set('h1', { turnId: 't', agentClient: 1, insertedFrom: 0, insertedTo: 'x', original: '', restoreAt: {}, status: 'pending', seq: 0 }),
      (d) => d.getMap(HUNKS_KEY).set('h1', { turnId: 't', agentClient: 1, insertedFrom: 0, insertedTo: 1, original: '', restoreAt: { item: { client: 1, clock: 'x' } }, status: 'pending', seq: 0 }),
    ];
    const before = serverText();
    for (const attack of attacks) {
      const pair = raw(editor.token);
      // A legitimate edit first in the same update: refused with the rest.
      pair.client.send(updateFrame(fileId, peerEdit(server, (d) => {
        d.getText(FILE_TEXT_KEY).insert(0, 'fine ');
        attack(d);
      })));
      h.flush();
      expect(pair.closeCode).toBe(CloseCode.MalformedFrame);
      expect(serverText()).toBe(before);
    }
    expect(h.gateway.metrics.render()).toMatch(/flint_updates_refused_total\{kind="invalid"\} 7/);
    honestStillWork();
  });

  it('[P4a] an item whose right neighbour comes before its left one is refused: replicas would order it differently', () => {
    const { h, ws, editor, fileId, serverText, honestStillWork, raw } = room();
    const server = h.gateway.document(ws.workspaceId, fileId)!;
    const text = server.getText(FILE_TEXT_KEY);
    const idAt = (index: number) => Y.createRelativePositionFromTypeIndex(text, index).item!;
    const before = serverText();
    // One item, and an update of two whose second builds on the first (checked on a copy).
    const single = Y.decodeUpdate(peerEdit(server, (d) => d.getText(FILE_TEXT_KEY).insert(1, 'X')));
    const item = single.structs[0] as Y.Item;
    item.origin = idAt(8);
    item.rightOrigin = idAt(2);
    const chained = Y.decodeUpdate(peerEdit(server, (d) => {
      d.getText(FILE_TEXT_KEY).insert(1, 'Y');
      d.getText(FILE_TEXT_KEY).insert(1, 'Z'); // between the doc's first character and Y
    }));
    const second = chained.structs.find((s) => s instanceof Y.Item && s.rightOrigin?.client === s.id.client) as Y.Item;
    second.origin = idAt(8);
    for (const update of [encodeDecodedUpdate(single), encodeDecodedUpdate(chained)]) {
      const pair = raw(editor.token);
      pair.client.send(updateFrame(fileId, update));
      h.flush();
      expect(pair.closeCode).toBe(CloseCode.MalformedFrame);
      expect(serverText()).toBe(before);
    }
    honestStillWork();
  });

  it('[P4a] a resent item whose new part would continue the sender\'s entry in another type is refused', () => {
    const { h, ws, editor, fileId, serverText, honestStillWork, raw } = room();
    const server = h.gateway.document(ws.workspaceId, fileId)!;
    const pair = raw(editor.token);
    // The sender's clock 0 is a hunk record (a review)...
    const restoreAt = Y.relativePositionToJSON(Y.createRelativePositionFromTypeIndex(server.getText(FILE_TEXT_KEY), 0));
    server.getMap(HUNKS_KEY).set('h1', { turnId: 't', agentClient: 7, insertedFrom: 0, insertedTo: 0, original: '', restoreAt, status: 'pending', seq: 0 }); // the agent's
    h.flush();
    const review = peerEdit(server, (d) => {
      d.clientID = 4242;
      d.getMap(HUNKS_KEY).set('h1', { turnId: 't', agentClient: 7, insertedFrom: 0, insertedTo: 0, original: '', restoreAt, status: 'accepted', seq: 0 });
    });
    pair.client.send(updateFrame(fileId, review));
    h.flush();
    expect(pair.isClosed).toBe(false);
    // ...then text claiming clocks 0-2: Yjs would put clocks 1-2 after the map entry, in the map.
    const text = Y.decodeUpdate(peerEdit(server, (d) => d.getText(FILE_TEXT_KEY).insert(d.getText(FILE_TEXT_KEY).length, 'abc')));
    const item = text.structs[0] as Y.Item;
    item.id = Y.createID(4242, 0);
    const before = serverText();
    pair.client.send(updateFrame(fileId, encodeDecodedUpdate(text)));
    h.flush();
    expect(pair.closeCode).toBe(CloseCode.MalformedFrame);
    expect(serverText()).toBe(before);
    honestStillWork();
  });

  it('[P4] a well-formed hunk record from a reviewer is accepted', () => {
    const { h, editor, fileId, honestStillWork, raw, ws } = room();
    const server = h.gateway.document(ws.workspaceId, fileId)!;
    const pair = raw(editor.token);
    const restoreAt = Y.relativePositionToJSON(Y.createRelativePositionFromTypeIndex(server.getText(FILE_TEXT_KEY), 0));
    server.getMap(HUNKS_KEY).set('h1', { turnId: 't', agentClient: 7, insertedFrom: 0, insertedTo: 0, original: 'x', restoreAt, status: 'pending', seq: 0 }); // the agent's
    h.flush();
    pair.client.send(updateFrame(fileId, peerEdit(server, (d) => d.getMap(HUNKS_KEY).set('h1', { turnId: 't', agentClient: 7, insertedFrom: 0, insertedTo: 0, original: 'x', restoreAt, status: 'rejected', seq: 0 }))));
    h.flush();
    expect(pair.isClosed).toBe(false);
    expect(server.getMap(HUNKS_KEY).get('h1')).toMatchObject({ status: 'rejected' });
    honestStillWork();
  });

  it('[P4] updates that build on changes the gateway lacks wait in the session, apply once complete, and are bounded', () => {
    const { h, editor, fileId, serverText, honestStillWork, raw, ws } = room();
    const server = h.gateway.document(ws.workspaceId, fileId)!;
    const offline = new Y.Doc();
    Y.applyUpdate(offline, Y.encodeStateAsUpdate(server));
    const synced = Y.encodeStateVector(offline);
    offline.getText(FILE_TEXT_KEY).insert(0, 'typed offline ');
    const first = Y.encodeStateAsUpdate(offline, synced);
    const mid = Y.encodeStateVector(offline);
    offline.getText(FILE_TEXT_KEY).insert(14, 'and more ');
    const second = Y.encodeStateAsUpdate(offline, mid);
    const pair = raw(editor.token);
    pair.client.send(updateFrame(fileId, second)); // arrives before what it builds on
    h.flush();
    expect(pair.isClosed).toBe(false);
    expect(server.store.pendingStructs).toBeNull();
    expect(serverText()).not.toContain('and more');
    pair.client.send(updateFrame(fileId, first));
    h.flush();
    expect(serverText().startsWith('typed offline and more ')).toBe(true);

    // Structs that depend on clocks nobody has: they wait in the session, up to maxFrameBytes.
    const hostage = raw(editor.token);
    for (let i = 0; i < 40 && !hostage.isClosed; i++) {
      const ghost = new Y.Doc();
      ghost.clientID = 1_000_000 + i;
      ghost.getText(FILE_TEXT_KEY).insert(0, 'x'.repeat(60_000));
      const all = Y.encodeStateAsUpdate(ghost);
      const head = Y.encodeStateVector(ghost);
      ghost.getText(FILE_TEXT_KEY).insert(60_000, 'y'.repeat(60_000));
      hostage.client.send(updateFrame(fileId, Y.encodeStateAsUpdate(ghost, head)));
      expect(all.byteLength).toBeGreaterThan(0);
      h.flush();
    }
    expect(hostage.closeCode).toBe(CloseCode.OutOfSync);
    expect(server.store.pendingStructs).toBeNull();
    expect(server.store.pendingDs).toBeNull();
    honestStillWork();
  });

  it('[P13] an awareness state that is not JSON closes the sender, viewer or not, and reaches nobody', () => {
    const { h, viewer, fileId, alice, honestStillWork, raw } = room();
    const pair = raw(viewer.token);
    pair.client.send(awarenessFrame(fileId, [[4242, 1, '{"user": oops']]));
    h.flush();
    expect(pair.closeCode).toBe(CloseCode.MalformedFrame);
    expect(alice.openDoc(fileId).awareness.getStates().has(4242)).toBe(false);
    honestStillWork();
  });

  it('[P13] identity comes from the gateway: no agent flag, no "(AI)", no name another link shows as', () => {
    const { h, viewer, fileId, alice, ws, honestStillWork, raw } = room();
    alice.openDoc(fileId).awareness.setLocalStateField('user', { id: 'alice-tab', name: 'Alice', color: '#ff0000' });
    h.flush();
    const pair = raw(viewer.token);
    const state = { user: { id: 'x', name: 'Alice', color: 'red; background: url(evil)', agent: true }, selection: null };
    pair.client.send(awarenessFrame(fileId, [[777, 1, JSON.stringify(state)]]));
    pair.client.send(awarenessFrame(fileId, [[778, 1, JSON.stringify({ user: { name: 'gpt-5 (AI)' } })]]));
    h.flush();
    const seen = alice.openDoc(fileId).awareness.getStates();
    expect(seen.get(777)?.user).toMatchObject({ name: 'Alice (2)', color: '#9aa3b2', role: 'viewer' });
    expect(seen.get(777)?.user.id).not.toBe('x'); // stamped with the session's link
    expect(seen.get(778)?.user).toMatchObject({ name: 'gpt-5', role: 'viewer' });
    expect(JSON.stringify([...seen.values()])).not.toContain('"agent"');
    expect(ws.workspaceId).toBeTruthy();
    honestStillWork();
  });

  it.each([
    ['a zero-width space', 'Alice\u200B'],
    ['a zero-width joiner', 'Al\u200Dice'],
    ['a word joiner', 'Ali\u2060ce'],
    ['a soft hyphen', 'Al\u00ADice'],
    ['a Hangul filler', 'Alice\u3164'],
    ['a braille blank', 'Alice\u2800'],
    ['a combining grapheme joiner', 'Al\u034Fice'],
    ['a Cyrillic А', '\u0410lice'],
    ['a fullwidth Ａ', '\uFF21lice'],
    ['a capital I for an l', 'AIice'],
    ['a decomposed name beside the composed one', 'Alice'.normalize('NFD')],
  ])('[P13] no posing through names: %s reads as Alice, who is here, so it gets a number', (_what, poser) => {
    const { h, viewer, fileId, alice, raw } = room();
    alice.openDoc(fileId).awareness.setLocalStateField('user', { id: 'alice-tab', name: 'Alice', color: '#ff0000' });
    h.flush();
    const pair = raw(viewer.token);
    pair.client.send(awarenessFrame(fileId, [[777, 1, JSON.stringify({ user: { id: 'alice-tab', name: poser, color: '#00ff00' } })]]));
    h.flush();
    const seen = alice.openDoc(fileId).awareness.getStates();
    const shown = seen.get(777)?.user as { id: string; name: string };
    expect(shown.name).toMatch(/ \(2\)$/);
    expect(shown.name).not.toMatch(/[\u200B\u200D\u2060\u00AD\u3164\u2800\u034F]/);
    // The tab id alice's own tab announced is hers: a tab of another link copying it gets another.
    const mine = seen.get(alice.openDoc(fileId).doc.clientID)?.user as { id: string };
    expect(shown.id).not.toBe(mine.id);
  });

  it.each([['gpt-5 (AI)\u200B'], ['gpt-5 \uFF08AI\uFF09'], ['gpt-5 (AI).'], ['gpt-5 ( Al )'], ['gpt-5 (\u0410I)'], ['gpt-5 [AI]'], ['gpt-5 (A.I.)'], ['gpt-5 \u{1F916}'], ['gpt-5 {ai}']])(
    '[P13] no posing as the agent: %j loses its "(AI)"',
    (name) => {
      const { h, viewer, fileId, alice, raw } = room();
      const pair = raw(viewer.token);
      pair.client.send(awarenessFrame(fileId, [[778, 1, JSON.stringify({ user: { name } })]]));
      h.flush();
      const shown = (alice.openDoc(fileId).awareness.getStates().get(778)?.user as { name: string }).name;
      expect(shown.startsWith('gpt-5')).toBe(true);
      expect(nameKey(shown)).not.toMatch(/[([{]\s*a\.?\s*[il1]\.?\s*[)\]}]/);
      expect(shown).not.toContain('\u{1F916}');
    },
  );

  it('[P22] a hunk record no agent turn wrote is refused: a forged one cannot make Reject delete the owner\'s typing', () => {
    const { h, fileId, alice, aliceText, bob, honestStillWork } = room();
    const ownerCode = 'const allowed = checkAuth(user);\n';
    aliceText.insert(0, ownerCode);
    h.flush();
    const bobDoc = bob.openDoc(fileId).doc;
    bobDoc.getMap(HUNKS_KEY).set('hForged', {
      turnId: 'tFake',
      agentClient: alice.openDoc(fileId).doc.clientID,
      insertedFrom: 0,
      insertedTo: ownerCode.length,
      original: 'const allowed = true; // bypass\n',
      restoreAt: Y.relativePositionToJSON(Y.createRelativePositionFromTypeIndex(bobDoc.getText(FILE_TEXT_KEY), 0)),
      status: 'pending',
      seq: 1,
    });
    h.flush();
    expect(bob.status.kind).toBe('closed');
    expect(alice.openDoc(fileId).doc.getMap(HUNKS_KEY).has('hForged')).toBe(false);
    expect(alice.review(fileId, { turnId: 'tFake' }, 'reject')).toBe(0);
    expect(aliceText.toString()).toContain(ownerCode);
    void honestStillWork;
  });

  it('[P22] a reviewer cannot mark someone\'s existing text as restored by a reject (a later reject would delete it)', () => {
    const { h, fileId, alice, aliceText, bob, ws } = room();
    aliceText.insert(0, 'const keep = 1;\n');
    h.flush();
    const server = h.gateway.document(ws.workspaceId, fileId)!;
    const restoreAt = Y.relativePositionToJSON(Y.createRelativePositionFromTypeIndex(server.getText(FILE_TEXT_KEY), 0));
    server.getMap(HUNKS_KEY).set('h1', { turnId: 't', agentClient: 7, insertedFrom: 0, insertedTo: 0, original: '', restoreAt, status: 'pending', seq: 0 }); // the agent's
    h.flush();
    const bobDoc = bob.openDoc(fileId).doc;
    const record = bobDoc.getMap(HUNKS_KEY).get('h1') as Record<string, unknown>;
    bobDoc.getMap(HUNKS_KEY).set('h1', { ...record, restored: [{ client: alice.openDoc(fileId).doc.clientID, clock: 0, length: 5 }] });
    h.flush();
    expect(bob.status.kind).toBe('closed');
    expect((server.getMap(HUNKS_KEY).get('h1') as { restored?: unknown }).restored).toBeUndefined();
  });

  it('[P22] nor mark the owner\'s next characters as restored, nor point a hunk\'s removed text at what she deleted', () => {
    const { h, fileId, alice, aliceText, bob, ws } = room();
    const server = h.gateway.document(ws.workspaceId, fileId)!;
    aliceText.insert(0, 'if (debug) bypass();\n');
    h.flush();
    const aliceClient = alice.openDoc(fileId).doc.clientID;
    const deleted = { client: aliceClient, clock: 0, length: 'if (debug) bypass();\n'.length };
    aliceText.delete(0, deleted.length);
    h.flush();
    const restoreAt = Y.relativePositionToJSON(Y.createRelativePositionFromTypeIndex(server.getText(FILE_TEXT_KEY), 0));
    server.getMap(HUNKS_KEY).set('h1', { turnId: 't', agentClient: 7, insertedFrom: 0, insertedTo: 0, original: '', restoreAt, status: 'pending', seq: 0 }); // the agent's
    h.flush();
    const bobMap = bob.openDoc(fileId).doc.getMap(HUNKS_KEY);
    const record = bobMap.get('h1') as Record<string, unknown>;
    bobMap.set('h1', { ...record, restored: [{ client: aliceClient, clock: Y.getState(server.store, aliceClient), length: 1000 }] });
    h.flush();
    expect(bob.status.kind).toBe('closed');
    const carol = h.client(ws.workspaceId, h.gateway.links.create(ws.workspaceId, 'editor', 'Carol', null).token);
    h.flush();
    const carolMap = carol.openDoc(fileId).doc.getMap(HUNKS_KEY);
    h.flush();
    carolMap.set('h1', { ...(carolMap.get('h1') as object), original: 'if (debug) bypass();\n', removed: [deleted] });
    h.flush();
    expect(carol.status.kind).toBe('closed');
    aliceText.insert(aliceText.length, 'const allowed = checkAuth(user);\n');
    h.flush();
    alice.review(fileId, { turnId: 't' }, 'reject');
    h.flush();
    expect(server.getText(FILE_TEXT_KEY).toString()).toBe(aliceText.toString());
    expect(aliceText.toString()).toContain('checkAuth');
    expect(aliceText.toString()).not.toContain('bypass');
  });

  it('[P13] a session cycling through client ids (set, remove, set new ones) reaches no tab past a bound, and tabs forget removed ids', () => {
    const { h, viewer, fileId, alice, honestStillWork, raw } = room();
    const pair = raw(viewer.token);
    const seen = new Set<number>();
    const awareness = alice.openDoc(fileId).awareness;
    awareness.on('change', ({ added }: { added: number[] }) => added.forEach((id) => seen.add(id)));
    for (let round = 0; round < 50; round++) {
      const ids = [0, 1, 2, 3].map((i) => 50_000 + round * 4 + i);
      pair.client.send(awarenessFrame(fileId, ids.map((id) => [id, 1, '{}'] as [number, number, string])));
      pair.client.send(awarenessFrame(fileId, ids.map((id) => [id, 2, 'null'] as [number, number, string])));
      h.flush();
    }
    expect(pair.isClosed).toBe(false);
    expect(seen.size).toBeLessThanOrEqual(64);
    expect([...awareness.meta.keys()].filter((id) => id >= 50_000 && id < 50_200)).toEqual([]);
    honestStillWork();
  });

  it('[P4a] no writing under another tab\'s client id: the squatter is closed (4409) and the owner\'s offline work is stored', () => {
    const { h, editor, fileId, alice, aliceText, raw, ws, serverText } = room();
    const aliceDoc = alice.openDoc(fileId).doc;
    alice.openDoc(fileId).awareness.setLocalStateField('user', { id: 'alice-tab', name: 'Alice', color: '#ff0000' });
    h.flush();
    aliceText.insert(aliceText.length, 'line1\n');
    h.flush();
    expect(serverText()).toContain('line1');
    // Alice's tab loses its connection and she keeps typing.
    const alicePair = h.net.pairs.find((pair) => !pair.isClosed)!;
    alicePair.disconnect(1006, 'offline');
    h.flush();
    aliceText.insert(aliceText.length, 'MY OFFLINE WORK\n');
    // The squatter writes "EVIL" as Alice's client, at the clocks her offline edit took.
    const server = h.gateway.document(ws.workspaceId, fileId)!;
    const squat = new Y.Doc();
    Y.applyUpdate(squat, Y.encodeStateAsUpdate(server));
    squat.clientID = aliceDoc.clientID; // after: Yjs gives a doc a new id when its own comes in
    const before = Y.encodeStateVector(squat);
    squat.getText(FILE_TEXT_KEY).insert(0, 'EVIL\n');
    const pair = raw(editor.token);
    pair.client.send(updateFrame(fileId, Y.encodeStateAsUpdate(squat, before)));
    h.flush();
    expect(pair.closeCode).toBe(CloseCode.OutOfSync);
    expect(serverText()).not.toContain('EVIL');
    h.settle(() => alice.status.kind === 'open' && serverText().includes('MY OFFLINE WORK'));
    expect(serverText()).toBe(aliceText.toString());
  });

  it('[P13] a selection whose positions are not Yjs ids is refused: clients resolve them unchecked', () => {
    const { h, editor, fileId, honestStillWork, raw } = room();
    const pair = raw(editor.token);
    const selection = { anchor: { item: { client: 1, clock: 'x' } }, head: { item: { client: 1, clock: 0 } } };
    pair.client.send(awarenessFrame(fileId, [[9, 1, JSON.stringify({ selection })]]));
    h.flush();
    expect(pair.closeCode).toBe(CloseCode.MalformedFrame);
    honestStillWork();
  });

  it('[P13] one session cannot announce thousands of client ids, nor send a huge state', () => {
    const { h, viewer, fileId, alice, honestStillWork, raw } = room();
    const many = raw(viewer.token);
    many.client.send(awarenessFrame(fileId, Array.from({ length: 12_000 }, (_, i) => [10_000 + i, 1, '{}'] as [number, number, string])));
    h.flush();
    expect(many.closeCode).toBe(CloseCode.MalformedFrame);
    const drip = raw(viewer.token);
    for (let i = 0; i < 10 && !drip.isClosed; i++) drip.client.send(awarenessFrame(fileId, [[20_000 + i, 1, '{}']]));
    h.flush();
    expect(drip.closeCode).toBe(CloseCode.MalformedFrame);
    const huge = raw(viewer.token);
    huge.client.send(awarenessFrame(fileId, [[30_000, 1, JSON.stringify({ pad: 'x'.repeat(5000) })]]));
    h.flush();
    expect(huge.closeCode).toBe(CloseCode.MalformedFrame);
    h.flush();
    expect(alice.openDoc(fileId).awareness.getStates().size).toBeLessThanOrEqual(3);
    honestStillWork();
  });

  it('a stored document with updates that do not apply loads from those that do; the rest are set aside and counted', () => {
    const store = new SqliteStore(':memory:');
    const h = new Harness(store);
    const ws = h.gateway.createWorkspace('Stored', { 'a.ts': 'good text\n' });
    const alice = h.client(ws.workspaceId, ws.owner.token);
    h.flush();
    const fileId = fileIdOf(alice, 'a.ts');
    textOf(alice, fileId);
    h.flush();
    textOf(alice, fileId).insert(0, '// kept\n');
    h.flush();
    alice.destroy();
    h.flush();
    const key = `${ws.workspaceId}/${fileId}`;
    const junk = new Y.Doc();
    junk.getText('evil').insert(0, 'x');
    store.appendUpdate(key, Y.encodeStateAsUpdate(junk)); // written by an older gateway, say
    store.appendUpdate(key, new Uint8Array([1, 1, 200, 3, 4, 5])); // and bytes that do not decode
    h.restart();
    const bob = h.client(ws.workspaceId, ws.owner.token);
    h.flush();
    const text = textOf(bob, fileId);
    h.flush();
    expect(bob.status.kind).toBe('open');
    expect(text.toString()).toBe('// kept\ngood text\n');
    expect(store.listSetAside(key)).toHaveLength(2);
    expect(h.gateway.metrics.render()).toMatch(/flint_updates_set_aside_total 2/);
    // Loaded again, the document is clean: nothing more is set aside.
    bob.destroy();
    h.restart();
    const carol = h.client(ws.workspaceId, ws.owner.token);
    h.flush();
    expect(textOf(carol, fileId).toString()).toBe('');
    h.flush();
    expect(textOf(carol, fileId).toString()).toBe('// kept\ngood text\n');
    expect(store.listSetAside(key)).toHaveLength(2);
  });
});

describe('FlintClient defends itself against what the gateway relays', () => {
  function clientWithInjector() {
    const h = new Harness();
    const ws = h.gateway.createWorkspace('Client', { 'a.ts': 'abc\n' });
    let pair: MemorySocketPair | null = null;
    const client = h.client(ws.workspaceId, ws.owner.token, {
      createSocket: () => {
        pair = h.openRaw();
        return pair.client as never;
      },
    });
    h.flush();
    const fileId = fileIdOf(client, 'a.ts');
    const text = textOf(client, fileId);
    h.flush();
    const other = h.client(ws.workspaceId, ws.owner.token);
    h.flush();
    const otherText = textOf(other, fileId);
    h.flush();
    /** Delivers a frame to `client` as if the gateway had sent it. */
    const inject = (frame: Uint8Array) => {
      pair!.server.send(frame);
      h.flush();
    };
    return { h, client, other, fileId, text, otherText, inject };
  }

  it('a non-JSON awareness state is left out and reported; the rest of the frame applies', () => {
    const { client, fileId, inject, text, otherText, h } = clientWithInjector();
    const faults: string[] = [];
    client.onFault((f) => faults.push(f.message));
    inject(awarenessFrame(fileId, [[5, 1, '{"user": oops'], [6, 1, '{"user":{"name":"Ok"}}']]));
    const states = client.openDoc(fileId).awareness.getStates();
    expect(states.has(5)).toBe(false);
    expect(states.get(6)).toEqual({ user: { name: 'Ok' } });
    expect(faults).toHaveLength(1);
    otherText.insert(0, 'still live ');
    h.flush();
    expect(text.toString()).toBe(otherText.toString());
  });

  it('an update that does not apply is reported, and the doc resyncs and keeps converging', () => {
    const { client, fileId, inject, text, otherText, h } = clientWithInjector();
    const faults: string[] = [];
    client.onFault((f) => faults.push(f.message));
    const broken = Y.encodeStateAsUpdate((() => {
      const d = new Y.Doc();
      d.getText(FILE_TEXT_KEY).insert(0, 'x'.repeat(100));
      return d;
    })()).slice(0, 20);
    const encoder = encoding.createEncoder();
    encoding.writeVarUint(encoder, 2);
    encoding.writeVarUint8Array(encoder, broken);
    inject(encodeDocFrame(Channel.Sync, fileId, encoding.toUint8Array(encoder)));
    expect(faults).toHaveLength(1);
    expect(client.status.kind).toBe('open');
    otherText.insert(0, 'after ');
    text.insert(text.length, 'mine');
    h.flush();
    expect(text.toString()).toBe(otherText.toString());
    expect(text.toString()).toContain('after ');
    expect(text.toString()).toContain('mine');
    expect(awarenessProtocol).toBeDefined();
  });
});
