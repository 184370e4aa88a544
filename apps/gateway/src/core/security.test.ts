import { Channel, CloseCode, decodeServerFrame, encodeControl, encodeDocFrame, INDEX_DOC_ID, isDecodeError, PROTOCOL_VERSION } from '@flint/protocol';
import type { MemorySocketPair } from '@flint/test-kit';
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { fileIdOf, Harness, hello, insertUpdate, syncStep1Frame, textOf, updateFrame } from '../../test/testHarness';

/**
 * Hand-written clients doing what the UI never would. Each case checks the close code of
 * SPEC.md and that an honest editor in the same room keeps editing, unaffected.
 */
function setup(config?: ConstructorParameters<typeof Harness>[1]) {
  const h = new Harness(undefined, config);
  const ws = h.gateway.createWorkspace('Sec', { 'a.ts': 'const a = 1;\n' });
  const workspaceId = ws.workspaceId;
  const editor = h.gateway.links.create(workspaceId, 'editor', 'Editor', null);
  const viewer = h.gateway.links.create(workspaceId, 'viewer', 'Viewer', null);
  const honest = h.client(workspaceId, editor.token);
  h.flush();
  const fileId = fileIdOf(honest, 'a.ts');
  const honestText = textOf(honest, fileId);
  h.flush();
  /** Types into the honest session and checks the gateway still relays it to a fresh reader. */
  const honestStillEdits = () => {
    honestText.insert(honestText.length, '// still here\n');
    h.flush();
    const reader = h.client(workspaceId, viewer.token);
    h.flush();
    const seen = textOf(reader, fileId);
    h.flush();
    expect(honest.status.kind).toBe('open');
    expect(seen.toString()).toBe(honestText.toString());
    expect(seen.toString()).toContain('// still here');
  };
  const raw = (token: string): MemorySocketPair => {
    const pair = h.openRaw();
    hello(pair, workspaceId, token);
    h.flush();
    return pair;
  };
  return { h, workspaceId, ownerToken: ws.owner.token, editor, viewer, fileId, honestStillEdits, raw };
}

describe('security: the gateway refuses, whatever the client sends', () => {
  it('[P9] a viewer\'s update closes its socket with Forbidden and changes nothing', () => {
    const { h, viewer, fileId, honestStillEdits, raw } = setup();
    const pair = raw(viewer.token);
    pair.client.send(syncStep1Frame(fileId));
    pair.client.send(updateFrame(fileId, insertUpdate('viewer was here')));
    h.flush();
    expect(pair.closeCode).toBe(CloseCode.Forbidden);
    honestStillEdits();
  });

  it('[P9] nobody writes the index doc directly, not even the owner', () => {
    const { h, ownerToken, honestStillEdits, raw } = setup();
    const pair = raw(ownerToken);
    pair.client.send(syncStep1Frame(INDEX_DOC_ID));
    const doc = new Y.Doc();
    doc.getMap('entries').set('../../evil', { kind: 'folder' });
    pair.client.send(updateFrame(INDEX_DOC_ID, Y.encodeStateAsUpdate(doc)));
    h.flush();
    expect(pair.closeCode).toBe(CloseCode.Forbidden);
    honestStillEdits();
  });

  it('[P14] a viewer\'s file operation is answered forbidden, its socket stays open and nothing changes', () => {
    const { h, viewer, honestStillEdits, raw } = setup();
    const pair = raw(viewer.token);
    const answers: unknown[] = [];
    pair.client.onmessage = (event) => {
      const frame = decodeServerFrame(new Uint8Array(event.data as ArrayBuffer));
      if (!isDecodeError(frame) && frame.channel === Channel.Control && frame.message.type === 'result') answers.push(frame.message);
    };
    pair.client.send(encodeControl({ type: 'file.delete', requestId: 1, path: 'a.ts' }));
    pair.client.send(encodeControl({ type: 'file.create', requestId: 2, path: 'b.ts', kind: 'file' }));
    h.flush();
    expect(pair.closeCode).toBeNull();
    expect(answers).toEqual([
      expect.objectContaining({ type: 'result', requestId: 1, ok: false, code: 'forbidden' }),
      expect.objectContaining({ type: 'result', requestId: 2, ok: false, code: 'forbidden' }),
    ]);
    honestStillEdits();
  });

  it('[P7] a wrong token is refused with Unauthorized', () => {
    const { h, honestStillEdits, raw } = setup();
    const pair = raw('not-a-real-token-at-all');
    expect(pair.closeCode).toBe(CloseCode.Unauthorized);
    h.flush();
    honestStillEdits();
  });

  it('[P7] a token for another workspace is refused with Unauthorized', () => {
    const { h, honestStillEdits } = setup();
    const other = h.gateway.createWorkspace('Other', {});
    const pair = h.openRaw();
    const { workspaceId } = h.gateway.createWorkspace('Third', {});
    hello(pair, workspaceId, other.owner.token);
    h.flush();
    expect(pair.closeCode).toBe(CloseCode.Unauthorized);
    honestStillEdits();
  });

  it('[P15] revoking a link disconnects its sessions at once; the token then stays refused', () => {
    const { h, workspaceId, ownerToken, editor, raw } = setup();
    const victim = h.client(workspaceId, editor.token);
    const ownerSession = h.client(workspaceId, ownerToken);
    const other = h.gateway.links.create(workspaceId, 'editor', 'Other', null);
    const survivor = h.client(workspaceId, other.token);
    h.flush();
    const result = h.gateway.revokeLink(workspaceId, ownerToken, editor.link.id);
    expect(result.ok).toBe(true);
    h.flush();
    expect(victim.status).toMatchObject({ kind: 'closed', code: CloseCode.LinkRevoked });
    expect(survivor.status.kind).toBe('open');
    expect(ownerSession.status.kind).toBe('open');
    const again = raw(editor.token);
    expect(again.closeCode).toBe(CloseCode.LinkRevoked);
    expect(h.gateway.listLinks(workspaceId, ownerToken)).toMatchObject({ ok: true });
  });

  it('[P15] link management is the owner\'s: an editor link can neither create, list nor revoke links, the owner\'s least of all', () => {
    const { h, workspaceId, ownerToken, editor, viewer, honestStillEdits } = setup();
    const owner = h.client(workspaceId, ownerToken);
    h.flush();
    const ownerLinkId = h.gateway.links.authenticate(workspaceId, ownerToken);
    if (!ownerLinkId.ok) throw new Error('the owner token opens its workspace');
    expect(h.gateway.revokeLink(workspaceId, editor.token, ownerLinkId.link.id)).toMatchObject({ ok: false, status: 403 });
    expect(h.gateway.revokeLink(workspaceId, editor.token, viewer.link.id)).toMatchObject({ ok: false, status: 403 });
    expect(h.gateway.share(workspaceId, editor.token, { role: 'viewer', label: 'x', expiresInMs: null })).toMatchObject({ ok: false, status: 403 });
    expect(h.gateway.listLinks(workspaceId, editor.token)).toMatchObject({ ok: false, status: 403 });
    expect(h.gateway.listLinks(workspaceId, viewer.token)).toMatchObject({ ok: false, status: 403 });
    h.flush();
    expect(owner.status.kind).toBe('open');
    honestStillEdits();
  });

  it('[P15] the last live owner link cannot be revoked; with a second one, either can go, and the revoked tab is told who did it', () => {
    const { h, workspaceId, ownerToken, editor } = setup();
    const first = h.gateway.links.authenticate(workspaceId, ownerToken);
    if (!first.ok) throw new Error('the owner token opens its workspace');
    const refused = h.gateway.revokeLink(workspaceId, ownerToken, first.link.id);
    expect(refused).toMatchObject({ ok: false, status: 409, message: expect.stringMatching(/last owner link/) });
    // An expired owner link does not count as another way in.
    h.gateway.links.create(workspaceId, 'owner', 'Expiring', 1_000);
    h.clock.advance(1_000);
    expect(h.gateway.revokeLink(workspaceId, ownerToken, first.link.id)).toMatchObject({ ok: false, status: 409 });

    const second = h.gateway.share(workspaceId, ownerToken, { role: 'owner', label: 'Laptop', expiresInMs: null });
    if (!second.ok) throw new Error('an owner shares an owner link');
    const victim = h.client(workspaceId, editor.token);
    h.flush();
    expect(h.gateway.revokeLink(workspaceId, second.value.token, editor.link.id)).toMatchObject({ ok: true });
    h.flush();
    expect(victim.status).toMatchObject({ kind: 'closed', code: CloseCode.LinkRevoked, message: expect.stringContaining('the owner (“Laptop”)') });
    const named = h.gateway.links.create(workspaceId, 'viewer', 'Named', null);
    const watcher = h.client(workspaceId, named.token);
    h.flush();
    expect(h.gateway.revokeLink(workspaceId, ownerToken, named.link.id, 'Olga\u200b ')).toMatchObject({ ok: true });
    h.flush();
    expect(watcher.status).toMatchObject({ kind: 'closed', message: expect.stringContaining('revoked by Olga (the owner).') });
    expect(h.gateway.revokeLink(workspaceId, second.value.token, first.link.id)).toMatchObject({ ok: true });
    expect(h.gateway.revokeLink(workspaceId, second.value.token, second.value.link.id)).toMatchObject({ ok: false, status: 409 });
  });

  it('[P15] an expiring link disconnects its sessions when it expires', () => {
    const { h, workspaceId, honestStillEdits, raw } = setup();
    const shortLived = h.gateway.links.create(workspaceId, 'editor', 'Short', 60_000);
    const pair = raw(shortLived.token);
    expect(pair.closeCode).toBeNull();
    h.clock.advance(59_999);
    h.flush();
    expect(pair.closeCode).toBeNull();
    h.clock.advance(1);
    h.flush();
    expect(pair.closeCode).toBe(CloseCode.LinkExpired);
    expect(raw(shortLived.token).closeCode).toBe(CloseCode.LinkExpired);
    honestStillEdits();
  });

  it('[P4] a malformed frame closes with MalformedFrame', () => {
    const cases: Uint8Array[] = [
      new Uint8Array([]),
      new Uint8Array([9, 1, 2]),
      new Uint8Array([Channel.Control, 0x7b, 0x22]),
      encodeControl({ type: 'ping' } as never),
      new Uint8Array([Channel.Sync, 0xff, 0xff, 0xff, 0xff, 0x0f]),
      encodeDocFrame(Channel.Sync, 'x'.repeat(65), new Uint8Array([0])),
    ];
    for (const frame of cases) {
      const { h, ownerToken, honestStillEdits, raw } = setup();
      const pair = raw(ownerToken);
      pair.client.send(frame);
      h.flush();
      expect(pair.closeCode, `frame ${Array.from(frame.slice(0, 8))}`).toBe(CloseCode.MalformedFrame);
      honestStillEdits();
    }
  });

  it('[P4] a corrupt Yjs update closes with MalformedFrame and leaves the document intact', () => {
    const { h, ownerToken, fileId, honestStillEdits, raw } = setup();
    const pair = raw(ownerToken);
    pair.client.send(syncStep1Frame(fileId));
    pair.client.send(updateFrame(fileId, new Uint8Array([5, 200, 1, 2, 3, 250, 250, 250])));
    h.flush();
    expect(pair.closeCode).toBe(CloseCode.MalformedFrame);
    honestStillEdits();
  });

  it('[P5] a frame before hello closes with MalformedFrame; no hello at all times out', () => {
    const { h, fileId, honestStillEdits } = setup();
    const early = h.openRaw();
    early.flush();
    early.client.send(syncStep1Frame(fileId));
    h.flush();
    expect(early.closeCode).toBe(CloseCode.MalformedFrame);
    const silent = h.openRaw();
    h.flush();
    h.clock.advance(h.gateway.config.helloTimeoutMs);
    h.flush();
    expect(silent.closeCode).toBe(CloseCode.HelloTimeout);
    honestStillEdits();
  });

  it('[P6] a client on another protocol version is told so', () => {
    const { h, workspaceId, ownerToken, honestStillEdits } = setup();
    const pair = h.openRaw();
    hello(pair, workspaceId, ownerToken, PROTOCOL_VERSION + 1);
    h.flush();
    expect(pair.closeCode).toBe(CloseCode.ProtocolVersion);
    honestStillEdits();
  });

  it('[P12] an oversized frame closes with FrameTooLarge before it is decoded', () => {
    const limits = { maxFrameBytes: 4096, maxDocBytes: 1 << 20, maxFiles: 100, maxMessagesPerSecond: 1000 };
    const { h, ownerToken, fileId, honestStillEdits, raw } = setup({ limits });
    const pair = raw(ownerToken);
    pair.client.send(syncStep1Frame(fileId));
    pair.client.send(updateFrame(fileId, insertUpdate('x'.repeat(5000))));
    h.flush();
    expect(pair.closeCode).toBe(CloseCode.FrameTooLarge);
    honestStillEdits();
  });

  it('[P12] an update that would grow a document past its limit closes with DocumentTooLarge', () => {
    const limits = { maxFrameBytes: 1 << 20, maxDocBytes: 10_000, maxFiles: 100, maxMessagesPerSecond: 1000 };
    const { h, ownerToken, fileId, raw } = setup({ limits });
    const pair = raw(ownerToken);
    pair.client.send(syncStep1Frame(fileId));
    pair.client.send(updateFrame(fileId, insertUpdate('y'.repeat(12_000))));
    h.flush();
    expect(pair.closeCode).toBe(CloseCode.DocumentTooLarge);
  });

  it('[P12] a flood of messages closes with RateLimited', () => {
    const limits = { maxFrameBytes: 1 << 20, maxDocBytes: 1 << 20, maxFiles: 100, maxMessagesPerSecond: 50 };
    const { h, ownerToken, honestStillEdits, raw } = setup({ limits });
    const pair = raw(ownerToken);
    for (let i = 0; i < 200; i++) pair.client.send(encodeControl({ type: 'ping', sentAt: i }));
    h.flush();
    expect(pair.closeCode).toBe(CloseCode.RateLimited);
    h.clock.advance(1000);
    honestStillEdits();
  });

  it('[P13] a session cannot overwrite another link\'s awareness state', () => {
    const { h, workspaceId, viewer, fileId, raw } = setup();
    const victimLink = h.gateway.links.create(workspaceId, 'editor', 'Victim', null);
    const victim = h.client(workspaceId, victimLink.token);
    const watcher = h.client(workspaceId, victimLink.token);
    h.flush();
    const victimDoc = victim.openDoc(fileId);
    const watcherDoc = watcher.openDoc(fileId);
    h.flush();
    victimDoc.awareness.setLocalStateField('user', { name: 'Victim' });
    h.flush();
    const attacker = raw(viewer.token);
    attacker.client.send(syncStep1Frame(fileId));
    const forged = new Uint8Array([1, ...varUint(victimDoc.doc.clientID), 99, ...varString('{"user":{"name":"Forged"}}')]);
    attacker.client.send(encodeDocFrame(Channel.Awareness, fileId, forged));
    h.flush();
    expect(watcherDoc.awareness.getStates().get(victimDoc.doc.clientID)).toMatchObject({ user: { name: 'Victim' } });
  });
});

function varUint(n: number): number[] {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return out;
}

function varString(s: string): number[] {
  const bytes = new TextEncoder().encode(s);
  return [...varUint(bytes.length), ...bytes];
}
