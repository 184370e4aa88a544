import { hunksOf } from '@flint/change-set';
import { Channel, decodeServerFrame, INDEX_DOC_ID, INDEX_ENTRIES_KEY, isDecodeError } from '@flint/protocol';
import * as syncProtocol from 'y-protocols/sync';
import { describe, expect, it } from 'vitest';
import type { ModelRouter } from './agent/ModelRouter';
import { drain, ScriptedProvider } from '../../test/ScriptedProvider';
import { fileIdOf, Harness, textOf } from '../../test/testHarness';
import { SqliteStore } from '../storage/SqliteStore';

const slowClientBytes = 4_000;

/** Alice keeps up; Bob's socket stops being read (a phone on a bad network) whenever the test says. */
function setup() {
  const provider = new ScriptedProvider();
  const models: ModelRouter = () => ({ provider, model: 'spark-test', contextTokens: 128_000, supportsPrediction: false });
  const h = new Harness(new SqliteStore(':memory:'), { slowClientBytes }, models);
  const ws = h.gateway.createWorkspace('Slow', { 'a.ts': 'const a = 1;\n' });
  const alice = h.client(ws.workspaceId, ws.owner.token);
  const pairsBefore = h.net.pairs.length;
  const bob = h.client(ws.workspaceId, h.gateway.links.create(ws.workspaceId, 'editor', 'Bob', null).token);
  const bobPair = h.net.pairs[pairsBefore]!;
  h.flush();
  const fileId = fileIdOf(alice, 'a.ts');
  const aliceText = textOf(alice, fileId);
  const bobText = textOf(bob, fileId);
  h.flush();
  return { h, provider, alice, bob, bobPair, fileId, aliceText, bobText };
}

type Ctx = ReturnType<typeof setup>;

/** The doc updates (sync channel, update messages) among frames queued for a client. */
const updateFrames = (frames: Uint8Array[]) =>
  frames.map(decodeServerFrame).filter((f) => !isDecodeError(f) && f.channel === Channel.Sync && f.payload[0] === syncProtocol.messageYjsUpdate).length;

/** Streams `flushes` flushes of agent text into the file (Alice prompts at its end). */
async function streamAgentText(ctx: Ctx, flushes: number): Promise<void> {
  const end = ctx.aliceText.length;
  const answer = ctx.alice.prompt({ fileId: ctx.fileId, anchor: end, head: end, instruction: 'continue' });
  for (let i = 0; i < 5; i++) {
    ctx.h.flush();
    await drain();
  }
  expect((await answer).ok).toBe(true);
  for (let i = 0; i < flushes; i++) {
    ctx.provider.emit(`export const v${i} = ${i}; // a line of agent code, ~60 characters\n`);
    await drain();
    ctx.h.clock.advance(8);
    ctx.h.flush();
  }
  ctx.provider.end();
  await drain();
  ctx.h.clock.advance(8);
  ctx.h.flush();
}

describe('a client that stops reading', () => {
  it('gets no backlog past the limit; when its socket drains, one catch-up update brings it level', async () => {
    const ctx = setup();
    ctx.bobPair.stalled = true;
    await streamAgentText(ctx, 300);
    for (let i = 0; i < 50; i++) {
      ctx.aliceText.insert(0, `// alice ${i}\n`);
      ctx.h.flush();
    }
    // ~300 agent flushes and 50 keystrokes: ~25 KB of updates if queued one by one.
    const queued = ctx.bobPair.server.bufferedBytes;
    expect(queued).toBeGreaterThan(slowClientBytes);
    expect(queued).toBeLessThan(slowClientBytes + 1_000);
    expect(ctx.h.gateway.metrics.counter('flint_updates_held_back_total')).toBeGreaterThan(0);
    expect(ctx.bobText.toString()).not.toBe(ctx.aliceText.toString());

    const heldUpdates = updateFrames(ctx.bobPair.toClient);
    ctx.bobPair.stalled = false;
    const delivered: Uint8Array[] = [];
    const onmessage = ctx.bobPair.client.onmessage!;
    ctx.bobPair.client.onmessage = (event) => {
      delivered.push(new Uint8Array(event.data as ArrayBuffer));
      onmessage(event);
    };
    ctx.h.flush();
    // What was queued, then exactly one update for everything held back.
    expect(updateFrames(delivered)).toBe(heldUpdates + 1);
    expect(ctx.bobText.toString()).toBe(ctx.aliceText.toString());
    expect(ctx.aliceText.toString()).toContain('export const v299 = 299;');
    // The turn's statuses were held back too (only the latest kept), and arrive after the text.
    expect([...ctx.bob.turns.values()].map((turn) => turn.status)).toEqual(['done']);
    // The change set came with it: Bob can review the agent's hunks like Alice.
    const bobDoc = ctx.bob.openDoc(ctx.fileId).doc;
    const aliceDoc = ctx.alice.openDoc(ctx.fileId).doc;
    expect([...hunksOf(bobDoc).entries()]).toEqual([...hunksOf(aliceDoc).entries()]);
    expect(hunksOf(bobDoc).size).toBeGreaterThan(0);
  });

  it("gets the latest cursor of each collaborator when it drains, not every move it missed", () => {
    const ctx = setup();
    const aliceAwareness = ctx.alice.openDoc(ctx.fileId).awareness;
    const bobAwareness = ctx.bob.openDoc(ctx.fileId).awareness;
    ctx.bobPair.stalled = true;
    // Fill Bob's socket past the limit, then move Alice's cursor many times.
    for (let i = 0; i < 100; i++) {
      ctx.aliceText.insert(ctx.aliceText.length, `line ${i} of text that Bob is not reading yet\n`);
      ctx.h.flush();
    }
    expect(ctx.bobPair.server.bufferedBytes).toBeGreaterThan(slowClientBytes);
    for (let i = 0; i < 40; i++) {
      aliceAwareness.setLocalStateField('cursor', { line: i });
      ctx.h.flush();
    }
    const queuedBefore = ctx.bobPair.toClient.length;
    aliceAwareness.setLocalStateField('cursor', { line: 99 });
    ctx.h.flush();
    expect(ctx.bobPair.toClient.length).toBe(queuedBefore); // held back, not queued
    ctx.bobPair.stalled = false;
    ctx.h.flush();
    expect(bobAwareness.getStates().get(aliceAwareness.clientID)).toMatchObject({ cursor: { line: 99 } });
    expect(ctx.bobText.toString()).toBe(ctx.aliceText.toString());
  });

  it('gets what was held back before a reply: a created file is in the index before its result', async () => {
    const ctx = setup();
    ctx.bobPair.stalled = true;
    for (let i = 0; i < 100; i++) {
      ctx.aliceText.insert(ctx.aliceText.length, `line ${i} of text that Bob is not reading yet\n`);
      ctx.h.flush();
    }
    expect(ctx.bobPair.server.bufferedBytes).toBeGreaterThan(slowClientBytes);
    const created = ctx.bob.request({ type: 'file.create', path: 'b.ts', kind: 'file' });
    ctx.h.flush(); // the request reaches the gateway; the index update and the reply queue for Bob
    const order: string[] = [];
    const onmessage = ctx.bobPair.client.onmessage!;
    ctx.bobPair.client.onmessage = (event) => {
      const frame = decodeServerFrame(new Uint8Array(event.data as ArrayBuffer));
      if (!isDecodeError(frame) && frame.channel === Channel.Control && frame.message.type === 'result') order.push('result');
      if (!isDecodeError(frame) && frame.channel === Channel.Sync && frame.docId === INDEX_DOC_ID) order.push('index update');
      onmessage(event);
    };
    ctx.bobPair.stalled = false;
    ctx.h.flush();
    expect((await created).ok).toBe(true);
    expect(order).toEqual(['index update', 'result']);
    expect(ctx.bob.index.doc.getMap(INDEX_ENTRIES_KEY).has('b.ts')).toBe(true);
    expect(ctx.bobText.toString()).toBe(ctx.aliceText.toString());
  });

  it('a client that keeps up gets every update as it happens (nothing held back)', async () => {
    const ctx = setup();
    await streamAgentText(ctx, 50);
    expect(ctx.h.gateway.metrics.counter('flint_updates_held_back_total')).toBe(0);
    expect(ctx.bobText.toString()).toBe(ctx.aliceText.toString());
  });
});
