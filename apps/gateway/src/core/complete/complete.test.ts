/** Autocomplete through the real gateway on in-memory sockets, with a provider the test drives. */
import { CloseCode, decodeServerFrame, encodeControl, isDecodeError, type ServerMessage } from '@flint/protocol';
import { describe, expect, it } from 'vitest';
import type { CompletionResult, CompletionStream } from '@flint/client';
import { SqliteStore } from '../../storage/SqliteStore';
import type { ModelRouter } from '../agent/ModelRouter';
import { drain, ProviderError, ScriptedProvider } from '../../../test/ScriptedProvider';
import { fileIdOf, Harness, hello, textOf } from '../../../test/testHarness';

const mathTs = 'export function add(a: number, b: number) {\n  return a + b;\n}\n\nexport const total = ';
const itemTs = 'export interface Item {\n  price: number;\n}\n';

function setup(options: { complete?: boolean } = {}) {
  const provider = new ScriptedProvider();
  const models: ModelRouter = (route) =>
    route === 'complete' && options.complete === false ? null : { provider, model: route === 'complete' ? 'qwen2.5-coder-test' : 'spark', contextTokens: 32_000, supportsPrediction: false };
  const h = new Harness(new SqliteStore(':memory:'), {}, models);
  const ws = h.gateway.createWorkspace('Complete', { 'src/math.ts': mathTs, 'src/item.ts': itemTs });
  const editor = h.gateway.links.create(ws.workspaceId, 'editor', 'Editor', null);
  const viewer = h.gateway.links.create(ws.workspaceId, 'viewer', 'Viewer', null);
  const alice = h.client(ws.workspaceId, ws.owner.token);
  h.flush();
  const fileId = fileIdOf(alice, 'src/math.ts');
  const itemId = fileIdOf(alice, 'src/item.ts');
  const text = textOf(alice, fileId);
  textOf(alice, itemId);
  h.flush();
  return { h, ws, provider, alice, fileId, itemId, text, editorToken: editor.token, viewerToken: viewer.token };
}

type Ctx = ReturnType<typeof setup>;

/** Asks at the end of the file, as Alice; the stream and everything Alice's stream received. */
function ask(ctx: Ctx, index = ctx.text.length, openFileIds: string[] = []) {
  const stream = ctx.alice.complete({ fileId: ctx.fileId, index, openFileIds });
  const deltas: string[] = [];
  stream.onDelta((received) => deltas.push(received));
  let result: CompletionResult | null = null;
  void stream.result.then((r) => (result = r));
  ctx.h.flush();
  return { stream, deltas, result: () => result };
}

async function settle(ctx: Ctx): Promise<void> {
  await drain();
  ctx.h.flush();
  await drain();
}

/** A raw session that records every control message it receives. */
function rawSession(ctx: Ctx, token: string) {
  const pair = ctx.h.openRaw();
  const messages: ServerMessage[] = [];
  pair.client.onmessage = (event) => {
    const frame = decodeServerFrame(new Uint8Array(event.data as ArrayBuffer));
    if (!isDecodeError(frame) && frame.channel === 0) messages.push(frame.message);
  };
  hello(pair, ctx.ws.workspaceId, token);
  ctx.h.flush();
  return { pair, messages };
}

describe('autocomplete over the gateway', () => {
  it('[P25] [P26] builds the FIM prompt from its own copy of the doc, keystrokes included, and streams back the suggestion', async () => {
    const ctx = setup();
    // The keystrokes and the request travel on the same socket, in order.
    ctx.text.insert(ctx.text.length, 'add(');
    const asked = ask(ctx, ctx.text.length, [ctx.itemId]);
    expect(ctx.provider.prompts).toHaveLength(1);
    const prompt = ctx.provider.prompts[0]!;
    expect(prompt.model).toBe('qwen2.5-coder-test');
    expect(prompt.prompt.endsWith('<|fim_prefix|>' + mathTs + 'add(<|fim_suffix|><|fim_middle|>')).toBe(true);
    expect(prompt.stop).toContain('<|endoftext|>');
    ctx.provider.emit('1, ');
    ctx.provider.emit('2);');
    ctx.provider.end();
    await settle(ctx);
    expect(asked.deltas.at(-1)).toBe('1, 2);');
    expect(asked.result()).toMatchObject({ status: 'done', text: '1, 2);', model: 'qwen2.5-coder-test', error: null });
    expect(ctx.h.gateway.metrics.counter('flint_completion_results_total', { status: 'done' })).toBe(1);
  });

  it('[P26] stops the provider as soon as the suggestion is complete, and never repeats the suffix', async () => {
    const ctx = setup();
    ctx.text.insert(ctx.text.length, 'add();');
    const asked = ask(ctx, ctx.text.length - 2);
    ctx.provider.emit('a, b);');
    ctx.provider.emit('\nconsole.log(total);');
    await settle(ctx);
    expect(ctx.provider.aborted).toBe(1);
    expect(asked.stream.received).toBe('a, b);');
    expect(asked.result()).toMatchObject({ status: 'done', text: 'a, b' });
  });

  it('[P25] a new request cancels the one in flight, upstream included', async () => {
    const ctx = setup();
    const first = ask(ctx);
    ctx.provider.emit('1');
    await settle(ctx);
    const second = ask(ctx);
    await settle(ctx);
    expect(first.result()).toMatchObject({ status: 'cancelled', text: '' });
    expect(ctx.provider.aborted).toBe(1);
    ctx.provider.emit('42;');
    ctx.provider.end();
    await settle(ctx);
    expect(second.result()).toMatchObject({ status: 'done', text: '42;' });
  });

  it('[P27] complete.cancel stops it; a cancel for a finished request is ignored', async () => {
    const ctx = setup();
    const asked = ask(ctx);
    asked.stream.cancel();
    ctx.h.flush();
    await settle(ctx);
    expect(asked.result()).toMatchObject({ status: 'cancelled' });
    expect(ctx.provider.aborted).toBe(1);
    expect(ctx.h.gateway.metrics.counter('flint_completion_results_total', { status: 'cancelled' })).toBe(1);
    asked.stream.cancel();
    ctx.h.flush();
    expect(ctx.h.gateway.metrics.counter('flint_completion_results_total', { status: 'cancelled' })).toBe(1);
  });

  it('[P26] refusals and provider failures are typed results', async () => {
    const unconfigured = setup({ complete: false });
    const refused = await ask(unconfigured).stream.result;
    expect(refused.error?.code).toBe('not_configured');

    const ctx = setup();
    const { pair, messages } = rawSession(ctx, ctx.editorToken);
    pair.client.send(encodeControl({ type: 'complete.request', requestId: 6, fileId: 'f-nope', position: 'AAAA', openFileIds: [] }));
    pair.client.send(encodeControl({ type: 'complete.request', requestId: 7, fileId: ctx.fileId, position: 'AAAA', openFileIds: [] }));
    ctx.h.flush();
    expect(messages.slice(-2)).toMatchObject([
      { type: 'complete.result', requestId: 6, status: 'failed', error: { code: 'not_found' } },
      { type: 'complete.result', requestId: 7, status: 'failed', error: { code: 'invalid_range' } },
    ]);

    const failing = ask(ctx);
    ctx.provider.fail(new ProviderError('rate_limited', 'slow down', 1500));
    await settle(ctx);
    expect(failing.result()).toMatchObject({ status: 'failed', error: { code: 'rate_limited', retryAfterMs: 1500 } });
    expect(ctx.h.gateway.metrics.counter('flint_completion_errors_total', { code: 'rate_limited' })).toBe(1);
  });

  it('[P29] a viewer\'s completion request closes with 4403; suggestions reach no other session', async () => {
    const ctx = setup();
    const viewer = rawSession(ctx, ctx.viewerToken);
    viewer.pair.client.send(encodeControl({ type: 'complete.request', requestId: 1, fileId: ctx.fileId, position: 'AAAA', openFileIds: [] }));
    ctx.h.flush();
    expect(viewer.pair.closeCode).toBe(CloseCode.Forbidden);
    const bob = rawSession(ctx, ctx.editorToken);
    const asked = ask(ctx);
    ctx.provider.emit('1;');
    ctx.provider.end();
    await settle(ctx);
    expect(asked.result()).toMatchObject({ status: 'done', text: '1;' });
    expect(bob.messages.filter((m) => m.type.startsWith('complete.'))).toEqual([]);
    expect(ctx.provider.prompts).toHaveLength(1);
  });

  it('[P28] counts feedback once per outcome, for the session\'s own suggestions only', async () => {
    const ctx = setup();
    const asked = ask(ctx);
    ctx.provider.emit('1;');
    ctx.provider.end();
    await settle(ctx);
    const id = asked.stream.requestId;
    ctx.alice.completionFeedback(id, 'shown', 42);
    ctx.alice.completionFeedback(id, 'shown', 42);
    ctx.alice.completionFeedback(id, 'accepted', 0);
    ctx.alice.completionFeedback(9999, 'accepted', 0);
    ctx.h.flush();
    const metrics = ctx.h.gateway.metrics;
    expect(metrics.counter('flint_completion_feedback_total', { outcome: 'shown' })).toBe(1);
    expect(metrics.counter('flint_completion_feedback_total', { outcome: 'accepted' })).toBe(1);
    const text = metrics.render();
    expect(text).toContain('flint_completion_ghost_latency_ms_bucket{le="50"} 1');
    expect(text).toContain('flint_completion_latency_ms_count 1');
    expect(text).toContain('flint_completion_requests_total 1');
  });

  it('closing the session aborts its completion', async () => {
    const ctx = setup();
    const asked: CompletionStream = ask(ctx).stream;
    ctx.alice.destroy();
    ctx.h.flush();
    await settle(ctx);
    expect(ctx.provider.aborted).toBe(1);
    expect(await asked.result).toMatchObject({ status: 'failed', error: { code: 'disconnected' } });
  });

  it('the prompt carries snippets of the other open files', () => {
    const ctx = setup();
    ctx.text.insert(ctx.text.length, 'add(asItem(x as Item), ');
    ask(ctx, ctx.text.length, [ctx.itemId, ctx.fileId, 'f-unknown']);
    expect(ctx.provider.prompts[0]!.prompt).toContain('<|file_sep|>src/item.ts\nexport interface Item {\n  price: number;');
  });
});
