/**
 * Positions a client sends for a prompt or a completion must point into the file's `content`
 * text ([P19], [P25]); anything else is refused before the model is asked.
 */
import { HUNKS_KEY } from '@flint/change-set';
import { Channel, decodeServerFrame, encodeControl, isDecodeError, type ServerMessage } from '@flint/protocol';
import { toBase64 } from 'lib0/buffer';
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { SqliteStore } from '../../storage/SqliteStore';
import { defaultConfig } from '../GatewayConfig';
import { fileIdOf, Harness, hello, textOf } from '../../../test/testHarness';
import type { ModelRouter } from './ModelRouter';
import { drain, ScriptedProvider } from '../../../test/ScriptedProvider';

const original = 'export function add(a: number, b: number) {\n  return a + b;\n}\n';

/** A workspace whose file already has a hunk (so its `flint.hunks` map holds items), and a raw editor session. */
async function setup() {
  const provider = new ScriptedProvider();
  const models: ModelRouter = (route) => ({ provider, model: route === 'complete' ? 'qwen2.5-coder-test' : 'spark-test', contextTokens: 32_000, supportsPrediction: false });
  // Many refused prompts in a row, 10 ms apart: the prompt rate limit is not what this is about.
  const h = new Harness(new SqliteStore(':memory:'), { agent: { ...defaultConfig.agent, promptsPerMinute: 6000 } }, models);
  const ws = h.gateway.createWorkspace('Range', { 'src/math.ts': original });
  const alice = h.client(ws.workspaceId, ws.owner.token);
  h.flush();
  const fileId = fileIdOf(alice, 'src/math.ts');
  const text = textOf(alice, fileId);
  h.flush();
  const first = alice.prompt({ fileId, anchor: 0, head: 0, instruction: 'add a comment' });
  h.flush();
  await drain(); // the answer is sent once the prompt is admitted
  h.flush();
  expect(await first).toMatchObject({ ok: true });
  provider.emit('// adds\nexport function add(a: number, b: number) {');
  provider.end();
  for (let i = 0; i < 3; i++) {
    await drain();
    h.clock.advance(8);
    h.flush();
  }
  const doc = alice.openDoc(fileId).doc;
  const hunks = doc.getMap(HUNKS_KEY);
  expect(hunks.size).toBe(1);
  const written = text.toString();

  const pair = h.openRaw();
  const messages: ServerMessage[] = [];
  pair.client.onmessage = (event) => {
    const frame = decodeServerFrame(new Uint8Array(event.data as ArrayBuffer));
    if (!isDecodeError(frame) && frame.channel === Channel.Control) messages.push(frame.message);
  };
  hello(pair, ws.workspaceId, ws.owner.token);
  h.flush();
  const hunkItem = hunks._map.values().next().value!;
  return { h, provider, fileId, text, written, pair, messages, inContent: (index: number) => encode(Y.createRelativePositionFromTypeIndex(text, index)), hunkItem };
}

/** Delivers a prompt and its answer, which is sent once the prompt is admitted. */
async function answered(ctx: Awaited<ReturnType<typeof setup>>): Promise<void> {
  ctx.h.flush();
  await drain();
  ctx.h.flush();
}

const encode = (position: Y.RelativePosition) => toBase64(Y.encodeRelativePosition(position));
const fromJson = (json: Record<string, unknown>) => encode(Y.createRelativePositionFromJSON(json));

/** Positions that name something other than the content text, each with what it is. */
function outsideContent(ctx: Awaited<ReturnType<typeof setup>>): Array<[string, string]> {
  const { client, clock } = ctx.hunkItem.id;
  return [
    ['the flint.hunks map, by name', fromJson({ tname: HUNKS_KEY, assoc: 0 })],
    ['an item of the flint.hunks map', fromJson({ item: { client, clock }, assoc: 0 })],
    ['an item of the flint.hunks map, as a type', fromJson({ type: { client, clock }, assoc: 0 })],
    ['an item the doc does not have', fromJson({ item: { client: 424242, clock: 7 }, assoc: 0 })],
    ['a root type the doc does not have', fromJson({ tname: 'notes', assoc: 0 })],
    ['not a relative position', 'AAAA'],
  ];
}

describe('positions outside the file\'s text', () => {
  it('[P19] a prompt whose anchor or head is not in the content text is refused with invalid_range, and the model is not asked', async () => {
    const ctx = await setup();
    const asked = ctx.provider.requests.length;
    let requestId = 100;
    for (const [what, position] of outsideContent(ctx)) {
      for (const [anchor, head] of [[position, position], [ctx.inContent(3), position], [position, ctx.inContent(3)]]) {
        const id = requestId++;
        ctx.h.clock.advance(10); // one prompt's worth of the rate limit (bursts of 10)
        ctx.pair.client.send(encodeControl({ type: 'agent.prompt', requestId: id, fileId: ctx.fileId, anchor: anchor!, head: head!, instruction: 'write here', route: 'fast' }));
        await answered(ctx);
        expect(ctx.messages.find((m) => m.type === 'result' && m.requestId === id), what).toMatchObject({ ok: false, code: 'invalid_range' });
      }
    }
    await drain();
    ctx.h.flush();
    expect(ctx.provider.requests).toHaveLength(asked);
    expect(ctx.text.toString()).toBe(ctx.written);
    // The same session's prompt with positions in the text still runs.
    ctx.h.clock.advance(10);
    ctx.pair.client.send(encodeControl({ type: 'agent.prompt', requestId: 1, fileId: ctx.fileId, anchor: ctx.inContent(0), head: ctx.inContent(2), instruction: 'ok', route: 'fast' }));
    await answered(ctx);
    expect(ctx.messages.find((m) => m.type === 'result' && m.requestId === 1)).toMatchObject({ ok: true });
  });

  it('[P25] [P26] a completion at a position that is not in the content text fails with invalid_range, and the model is not asked', async () => {
    const ctx = await setup();
    let requestId = 200;
    for (const [what, position] of outsideContent(ctx)) {
      const id = requestId++;
      ctx.pair.client.send(encodeControl({ type: 'complete.request', requestId: id, fileId: ctx.fileId, position, openFileIds: [] }));
      ctx.h.flush();
      expect(ctx.messages.find((m) => m.type === 'complete.result' && m.requestId === id), what).toMatchObject({ status: 'failed', error: { code: 'invalid_range' } });
    }
    expect(ctx.provider.prompts).toHaveLength(0);
    ctx.pair.client.send(encodeControl({ type: 'complete.request', requestId: 1, fileId: ctx.fileId, position: ctx.inContent(5), openFileIds: [] }));
    ctx.h.flush();
    expect(ctx.provider.prompts).toHaveLength(1);
  });
});
