import { Channel, CloseCode, encodeDocFrame, shouldReconnect } from '@flint/protocol';
import type { MemorySocketPair } from '@flint/test-kit';
import * as encoding from 'lib0/encoding';
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { defaultConfig } from './GatewayConfig';
import { fileIdOf, Harness, hello, syncStep1Frame, textOf, updateFrame } from '../../test/testHarness';

/** [I6] (DESIGN §11.6: no one request stalls the room) One link cannot open unlimited sessions, and what sessions hold adds up to a bound. */

const caps = { perLink: 5, perAddress: 8, waitingBytes: 3_000, snapshotStates: 10 };

function gateway() {
  const h = new Harness(undefined, { sessions: caps });
  const ws = h.gateway.createWorkspace('Caps', { 'a.ts': 'x\n' });
  const viewer = h.gateway.links.create(ws.workspaceId, 'viewer', 'Viewer', null);
  const editor = h.gateway.links.create(ws.workspaceId, 'editor', 'Editor', null);
  /** A raw session of `token`, from `address`, with a.ts open. */
  const open = (token: string, address = ''): MemorySocketPair => {
    const pair = h.net.open((p) => {
      const socket = new Proxy(p.server, { get: (target, key) => (key === 'remoteAddress' ? address : Reflect.get(target, key, target)) });
      const connection = h.gateway.connect(socket);
      p.accept({ onMessage: (data) => connection.receive(data), onClose: () => connection.closed(), onDrain: () => connection.drained() });
    });
    hello(pair, ws.workspaceId, token);
    h.flush();
    return pair;
  };
  return { h, ws, viewer, editor, open };
}

describe('[I6] session caps', () => {
  it('a link opens at most perLink sessions; the next is refused with a retryable 4430, and a closed one frees a place', () => {
    const { h, viewer, open } = gateway();
    const sessions = Array.from({ length: caps.perLink }, () => open(viewer.token));
    expect(sessions.every((pair) => !pair.isClosed)).toBe(true);
    const extra = open(viewer.token);
    expect(extra.closeCode).toBe(CloseCode.TooManySessions);
    expect(shouldReconnect(CloseCode.TooManySessions)).toBe(true);
    sessions[0]!.client.close(1000, 'tab closed');
    h.flush();
    expect(open(viewer.token).isClosed).toBe(false);
  });

  it('an address opens at most perAddress sessions whatever the links; another address still gets in', () => {
    const { h, ws, open } = gateway();
    const links = Array.from({ length: 3 }, () => h.gateway.links.create(ws.workspaceId, 'viewer', 'V', null));
    const pairs = Array.from({ length: caps.perAddress }, (_, i) => open(links[i % 3]!.token, '203.0.113.7'));
    expect(pairs.every((pair) => !pair.isClosed)).toBe(true);
    expect(open(links[0]!.token, '203.0.113.7').closeCode).toBe(CloseCode.TooManySessions);
    expect(open(links[0]!.token, '198.51.100.1').isClosed).toBe(false);
  });

  it('updates waiting for what they build on are bounded for all sessions together (4409, retryable)', () => {
    const { h, ws, editor, open } = gateway();
    const alice = h.client(ws.workspaceId, ws.owner.token);
    h.flush();
    const fileId = fileIdOf(alice, 'a.ts');
    /** An update that builds on a change the gateway never got: it waits in the session. */
    const dangling = (client: number, bytes: number) => {
      const doc = new Y.Doc();
      doc.clientID = client;
      doc.getText('content').insert(0, 'never sent\n');
      const before = Y.encodeStateVector(doc);
      doc.getText('content').insert(0, 'y'.repeat(bytes));
      return Y.encodeStateAsUpdate(doc, before);
    };
    const first = open(editor.token);
    first.client.send(syncStep1Frame(fileId));
    first.client.send(updateFrame(fileId, dangling(501, 2_000)));
    h.flush();
    expect(first.isClosed).toBe(false);
    const second = open(editor.token);
    second.client.send(syncStep1Frame(fileId));
    second.client.send(updateFrame(fileId, dangling(502, 2_000)));
    h.flush();
    expect(second.closeCode).toBe(CloseCode.OutOfSync);
    first.client.close(1000, 'gone');
    h.flush();
    const third = open(editor.token);
    third.client.send(syncStep1Frame(fileId));
    third.client.send(updateFrame(fileId, dangling(503, 2_000)));
    h.flush();
    expect(third.isClosed).toBe(false); // the first session's bytes were given back
  });

  it('a joiner receives at most snapshotStates cursors, in frames of a bounded size', () => {
    const { h, ws, open } = gateway();
    const alice = h.client(ws.workspaceId, ws.owner.token);
    h.flush();
    const fileId = fileIdOf(alice, 'a.ts');
    for (let l = 0; l < 4; l++) {
      const link = h.gateway.links.create(ws.workspaceId, 'viewer', `V${l}`, null);
      for (let s = 0; s < 4; s++) {
        const pair = open(link.token);
        pair.client.send(syncStep1Frame(fileId));
        const encoder = encoding.createEncoder();
        encoding.writeVarUint(encoder, 1);
        encoding.writeVarUint(encoder, 1_000 + l * 10 + s);
        encoding.writeVarUint(encoder, 1);
        encoding.writeVarString(encoder, JSON.stringify({ user: { name: `v${l}${s}` }, pad: 'p'.repeat(3_000) }));
        pair.client.send(encodeDocFrame(Channel.Awareness, fileId, encoding.toUint8Array(encoder)));
        h.flush();
      }
    }
    expect(h.gateway.document(ws.workspaceId, fileId)).toBeTruthy();
    const bob = h.client(ws.workspaceId, ws.owner.token);
    h.flush();
    const awareness = bob.openDoc(fileId).awareness;
    textOf(bob, fileId);
    h.flush();
    expect(awareness.getStates().size).toBeGreaterThan(0);
    expect(awareness.getStates().size).toBeLessThanOrEqual(caps.snapshotStates + 1); // + its own
  });

  it('the defaults are stated against honest use: a class of 30 on one link, each with a few tabs, behind one NAT', () => {
    expect(defaultConfig.sessions.perLink).toBeGreaterThanOrEqual(30 * 3);
    expect(defaultConfig.sessions.perAddress).toBeGreaterThanOrEqual(defaultConfig.sessions.perLink);
  });
});

describe('[I1] a tab with many files open', () => {
  it('reconnects and syncs all of them without tripping the rate limit (it resyncs in batches)', () => {
    const files = Object.fromEntries(Array.from({ length: 350 }, (_, i) => [`src/f${i}.ts`, `export const f${i} = ${i};\n`]));
    const h = new Harness();
    const ws = h.gateway.createWorkspace('Many', files);
    const tab = h.client(ws.workspaceId, ws.owner.token, { minBackoffMs: 10, maxBackoffMs: 10 });
    h.flush();
    const texts = Object.keys(files).map((path) => {
      const handle = tab.openDoc(fileIdOf(tab, path));
      handle.awareness.setLocalStateField('cursor', { at: 0 });
      return handle.doc.getText('content');
    });
    h.settle(() => texts.every((text) => text.length > 0));
    const before = h.gateway.metrics.counter('flint_session_closes_total', { code: CloseCode.RateLimited });
    for (const pair of h.net.pairs) pair.disconnect(1006, 'network gone');
    h.flush();
    texts[0]!.insert(0, '// typed offline\n');
    h.settle(() => tab.status.kind === 'open' && h.gateway.document(ws.workspaceId, fileIdOf(tab, 'src/f0.ts'))!.getText('content').toString().startsWith('// typed offline'));
    for (let step = 0; step < 100; step++) {
      h.clock.advance(100); // the rest of the batches, as time passes
      h.flush();
    }
    expect(h.gateway.metrics.counter('flint_session_closes_total', { code: CloseCode.RateLimited })).toBe(before);
    expect(tab.status.kind).toBe('open');
  });
});
