/**
 * Autocomplete end to end on loopback: client → real gateway (in-memory sockets) → the
 * OpenAI-compatible adapter → a fake FIM server that records what arrived and when the
 * gateway hung up.
 */
import { Completer, completionSourceOf, type CompletionResult, type EditorState } from '@flint/client';
import { FakeFimServer, until as waitUntil } from '@flint/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatCompletionsProvider } from '../../models/ChatCompletionsProvider';
import { withCircuitBreaker } from '../../models/CircuitBreaker';
import type { FimMode } from './Infiller';
import { SqliteStore } from '../../storage/SqliteStore';
import { fileIdOf, Harness, textOf } from '../../../test/testHarness';

const source = 'import { Item } from "./item";\n\nexport function total(items: Item[]) {\n  return items.';
const itemTs = 'export interface Item {\n  price: number;\n}\n';

let server: FakeFimServer;
beforeAll(async () => {
  server = await FakeFimServer.start();
});
afterAll(async () => {
  await server.close();
});

function setup(fimTemplate?: FimMode) {
  const provider = withCircuitBreaker(new ChatCompletionsProvider({ baseUrl: server.baseUrl, infillUrl: server.infillUrl, idleTimeoutMs: 5_000 }), { clock: Date });
  const h = new Harness(new SqliteStore(':memory:'), {}, () => ({ provider, model: 'qwen2.5-coder-1.5b', contextTokens: 32_000, supportsPrediction: false, fimTemplate }));
  const ws = h.gateway.createWorkspace('Loopback', { 'src/cart.ts': source, 'src/item.ts': itemTs });
  const alice = h.client(ws.workspaceId, ws.owner.token);
  h.flush();
  const fileId = fileIdOf(alice, 'src/cart.ts');
  const itemId = fileIdOf(alice, 'src/item.ts');
  const text = textOf(alice, fileId);
  textOf(alice, itemId);
  h.flush();
  /** Flushes the in-memory network and lets real sockets move until `done` holds. */
  const until = (done: () => boolean, what: string) => waitUntil(done, what, { step: () => h.flush(), pollMs: 3 });
  return { h, alice, fileId, itemId, text, until, close: () => provider.close() };
}

describe('autocomplete on loopback', () => {
  it('sends the Qwen FIM prompt to /v1/completions and answers with the suggestion', async () => {
    const ctx = setup();
    server.respondOnceWith({ chunks: ['reduce((sum, i) => sum + i.price', ', 0);'] });
    const stream = ctx.alice.complete({ fileId: ctx.fileId, index: ctx.text.length, openFileIds: [ctx.itemId] });
    let result: CompletionResult | null = null;
    void stream.result.then((r) => (result = r));
    await ctx.until(() => result !== null, 'the result');
    expect(result).toMatchObject({ status: 'done', text: 'reduce((sum, i) => sum + i.price, 0);', model: 'qwen2.5-coder-1.5b' });
    const sent = server.requests.at(-1)!;
    expect(sent.path).toBe('/v1/completions');
    expect(sent.body.prompt).toBe(
      `<|repo_name|>workspace\n<|file_sep|>src/item.ts\n${itemTs.trimEnd()}\n<|file_sep|>src/cart.ts\n<|fim_prefix|>${source}<|fim_suffix|><|fim_middle|>`,
    );
    expect(sent.body).toMatchObject({ model: 'qwen2.5-coder-1.5b', stream: true, temperature: 0 });
    expect(sent.body.stop).toEqual(expect.arrayContaining(['<|endoftext|>', '<|file_sep|>', '\n\n']));
    await ctx.close();
  });

  it('[P25] cancellation reaches the provider: a newer request closes the older HTTP request', async () => {
    const ctx = setup();
    server.respondOnceWith({ text: 'x'.repeat(200), chunkChars: 1, delayMs: 10 });
    const first = ctx.alice.complete({ fileId: ctx.fileId, index: ctx.text.length, openFileIds: [] });
    const before = server.requests.length;
    await ctx.until(() => first.received.length >= 2, 'the first deltas');
    server.respondOnceWith({ text: 'length;' });
    const second = ctx.alice.complete({ fileId: ctx.fileId, index: ctx.text.length, openFileIds: [] });
    let results: CompletionResult[] = [];
    void Promise.all([first.result, second.result]).then((r) => (results = r));
    await ctx.until(() => results.length === 2, 'both results');
    expect(results.map((r) => r.status)).toEqual(['cancelled', 'done']);
    await server.waitFor((s) => s.requests[before]?.outcome === 'client-closed');
    expect(server.requests[before]!.outcome).toBe('client-closed');
    await ctx.close();
  });

  it('[P26] stops the provider at the end of the line when the cursor is mid-line', async () => {
    const ctx = setup();
    ctx.text.insert(ctx.text.length, '();');
    ctx.h.flush();
    server.respondOnceWith({ chunks: ['len', 'gth', '\n', ...Array.from({ length: 50 }, () => 'more\n')], delayMs: 10 });
    const before = server.requests.length;
    const stream = ctx.alice.complete({ fileId: ctx.fileId, index: ctx.text.length - 3, openFileIds: [] });
    let result: CompletionResult | null = null;
    void stream.result.then((r) => (result = r));
    await ctx.until(() => result !== null, 'the result');
    expect(result).toMatchObject({ status: 'done', text: 'length' });
    expect(server.requests[before]!.body.stop).toContain('\n');
    // The gateway hung up at the newline instead of paying for the 50 lines after it.
    await server.waitFor((s) => s.requests[before]?.outcome !== 'pending');
    expect(server.requests[before]!.outcome).toBe('client-closed');
    await ctx.close();
  });

  it('typing the predicted characters reuses the suggestion: no new request reaches the provider', async () => {
    const ctx = setup();
    const completer = new Completer({ source: completionSourceOf(ctx.alice), timers: ctx.h.clock });
    const state = (): EditorState => {
      const all = ctx.text.toString();
      return { fileId: ctx.fileId, index: all.length, prefix: all.slice(-200), suffix: '', openFileIds: [ctx.itemId] };
    };
    const type = (chars: string) => {
      for (const c of chars) {
        ctx.h.clock.advance(120);
        ctx.text.insert(ctx.text.length, c);
        completer.edited(state());
      }
    };
    server.respondOnceWith({ text: 'ength > 0;' });
    const before = server.requests.length;
    type('l');
    ctx.h.clock.advance(1_000);
    await ctx.until(() => completer.suggestion !== null, 'the ghost text');
    expect(completer.suggestion?.text).toBe('ength > 0;');
    type('engt');
    ctx.h.clock.advance(1_000);
    ctx.h.flush();
    expect(completer.suggestion?.text).toBe('h > 0;');
    expect(server.requests.length - before).toBe(1);
    expect(completer.stats).toMatchObject({ requested: 1, reused: 4 });
    completer.dispose();
    await ctx.close();
  });

  it('llama-server /infill where configured: prefix, suffix and snippets as input_extra', async () => {
    const ctx = setup('infill');
    server.respondOnceWith({ chunks: ['length;'] });
    const stream = ctx.alice.complete({ fileId: ctx.fileId, index: ctx.text.length, openFileIds: [ctx.itemId] });
    let result: CompletionResult | null = null;
    void stream.result.then((r) => (result = r));
    await ctx.until(() => result !== null, 'the result');
    expect(result).toMatchObject({ status: 'done', text: 'length;' });
    expect(server.requests.at(-1)).toMatchObject({
      path: '/infill',
      body: { input_prefix: source, input_suffix: '', input_extra: [{ filename: 'src/item.ts', text: itemTs.trimEnd() }], stream: true },
    });
    await ctx.close();
  });
});
