/**
 * The agent thread against loopback fakes of both provider protocols, through the real adapters:
 * Responses over WebSocket with function calls (the fast route) and Chat Completions SSE with
 * streamed tool_calls (the deep route). Real sockets to the provider; the gateway and its
 * clients on the in-memory harness.
 */
import { readThread } from '@flint/protocol';
import { FakeClock, FakeOpenAIServer, type FakeScript } from '@flint/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProviders, loadProviderConfig } from '../../models/providerConfig';
import { SqliteStore } from '../../storage/SqliteStore';
import type { ModelRouter } from '../agent/ModelRouter';
import { fileIdOf, Harness, textOf, untilRealIo } from '../../../test/testHarness';
import { formatTs, taskTs, twoFilePatch as patch } from './threadFixtures';

let server: FakeOpenAIServer;
beforeAll(async () => {
  server = await FakeOpenAIServer.start();
});
afterAll(() => server.close());


function setup() {
  const config = loadProviderConfig(
    {},
    JSON.stringify({
      routes: {
        fast: { kind: 'openai-responses', baseUrl: server.baseUrl, apiKey: 'test-key', transport: 'websocket', model: 'spark' },
        deep: { kind: 'openai-chat', baseUrl: server.baseUrl, apiKey: 'test-key', model: 'oss' },
        complete: { kind: 'openai-chat', baseUrl: server.baseUrl, model: 'oss' },
      },
    }),
  );
  const clock = new FakeClock();
  const providers = createProviders(config, { clock, log: () => {} });
  const router: ModelRouter = (route) => ({
    provider: providers[route],
    model: config.routes[route].model,
    contextTokens: 128_000,
    supportsPrediction: false,
    supportsTools: true,
  });
  const h = new Harness(new SqliteStore(':memory:'), {}, router, clock);
  const ws = h.gateway.createWorkspace('Thread', { 'src/task.ts': taskTs, 'src/format.ts': formatTs });
  const editor = h.gateway.links.create(ws.workspaceId, 'editor', 'Editor', null);
  const alice = h.client(ws.workspaceId, ws.owner.token);
  const bob = h.client(ws.workspaceId, editor.token);
  h.flush();
  const thread = bob.openThread();
  const task = textOf(bob, fileIdOf(bob, 'src/task.ts'));
  const format = textOf(bob, fileIdOf(bob, 'src/format.ts'));
  h.flush();
  const close = () => Promise.all([providers.fast.close(), providers.deep.close()]);
  return { h, alice, bob, thread, task, format, close, view: () => readThread(thread.doc) };
}


const ended = (ctx: ReturnType<typeof setup>, count = 1) => () => {
  const turns = ctx.view().turns;
  return turns.length >= count && turns.slice(0, count).every((turn) => turn.status !== 'streaming');
};
/** The conversation a request carried, either protocol, as `role: text` lines (the system prompt left out). */
function transcript(body: Record<string, unknown>): string[] {
  const items = (body.messages ?? body.input) as Array<{ role?: string; content?: unknown }>;
  return items.flatMap((item) => {
    if (item.role !== 'user' && item.role !== 'assistant') return [];
    const text = typeof item.content === 'string' ? item.content : (item.content as Array<{ text: string }>).map((part) => part.text).join('');
    return [`${item.role}: ${text.slice(text.lastIndexOf('\n\n') + 1).trim()}`];
  });
}
const patchCall = (extra: Partial<FakeScript> = {}): Partial<FakeScript> => ({ text: 'Editing both files.', chunkChars: 6, toolCalls: [{ name: 'apply_patch', arguments: JSON.stringify({ patch }) }], ...extra });

describe.each([
  ['Responses over WebSocket', 'fast'],
  ['Chat Completions SSE', 'deep'],
] as const)('the agent thread over %s', (_name, route) => {
  it('runs a two-file turn: the patch streams into both files, its outcome goes back to the model', async () => {
    const ctx = setup();
    server.requests.length = 0;
    server.respondOnceWith(patchCall());
    server.respondOnceWith({ text: 'Added `dueDate`.' });
    void ctx.alice.threadSend({ text: 'add a dueDate to Task and show it in formatTask', route });
    await untilRealIo(ctx.h, ended(ctx), 'the turn to end');
    expect(ctx.task.toString()).toContain('  dueDate?: string;\n}');
    expect(ctx.format.toString()).toContain('task.dueDate ? `${task.title} (due ${task.dueDate})` : task.title;');
    const view = ctx.view();
    expect(view.turns[0]).toMatchObject({ status: 'done', steps: 2, toolCalls: 1 });
    expect(view.messages.map((m) => m.summary ?? m.text)).toEqual(['add a dueDate to Task and show it in formatTask', 'Editing both files.', 'edited 2 files +2 −1', 'Added `dueDate`.']);
    const second = JSON.stringify(server.requests[1]!.body);
    // The tool's result, in each protocol's shape.
    expect(second).toContain(route === 'fast' ? '"type":"function_call_output"' : '"role":"tool"');
    expect(second).toContain('updated src/task.ts (+1 -0)\\nupdated src/format.ts (+1 -1)');
    await ctx.close();
  });

  it('a steer mid-hunk stops the generation, keeps what it wrote, and continues with the message', async () => {
    const ctx = setup();
    server.requests.length = 0;
    server.respondOnceWith(patchCall({ chunkChars: 2, tokensPerSecond: 400 }));
    server.respondOnceWith({ text: 'Only the interface, then.' });
    void ctx.alice.threadSend({ text: 'add a dueDate', route });
    await untilRealIo(ctx.h, () => ctx.task.toString().includes('dueD'), 'the first hunk to stream in');
    void ctx.bob.threadSend({ text: 'only the interface', route });
    await untilRealIo(ctx.h, ended(ctx), 'the turn to end');
    expect(server.requests[0]!.outcome).toBe('client-closed');
    expect(ctx.task.toString()).toContain('dueD');
    expect(ctx.format.toString()).toBe(formatTs);
    expect(ctx.view().messages.find((m) => m.steer)?.text).toBe('only the interface');
    expect(JSON.stringify(server.requests[1]!.body)).toContain('only the interface\\n(You were interrupted');
    expect(ctx.view().messages.at(-1)?.text).toBe('Only the interface, then.');
    await ctx.close();
  });

  it('a queued message reaches the next turn once, after the answer it waited for', async () => {
    const ctx = setup();
    server.requests.length = 0;
    server.respondOnceWith(patchCall({ holdAfterChunks: 1 }));
    server.respondOnceWith({ text: 'Added `dueDate`.' });
    server.respondOnceWith({ text: 'Sorted.' });
    void ctx.alice.threadSend({ text: 'add a dueDate', route });
    await untilRealIo(ctx.h, () => server.heldCount === 1, 'the first answer to be held');
    void ctx.bob.threadSend({ text: 'then sort the tasks', route, mode: 'queue' });
    await untilRealIo(ctx.h, () => ctx.view().messages.some((m) => m.text === 'then sort the tasks' && m.queued), 'the message to be queued');
    server.release();
    await untilRealIo(ctx.h, ended(ctx, 2), 'both turns to end');
    expect(server.requests).toHaveLength(3);
    // What the model reads, in order: each person's message once, each answer after its question.
    expect(transcript(server.requests[2]!.body)).toEqual([
      'user: Someone: add a dueDate',
      'assistant: Editing both files.\n(Tool steps: edited 2 files +2 −1.)\nAdded `dueDate`.',
      'user: Someone: then sort the tasks',
    ]);
    // And so for every later turn, now that the queued message belongs to the turn it started.
    server.respondOnceWith({ text: 'You are welcome.' });
    void ctx.alice.threadSend({ text: 'thanks', route });
    await untilRealIo(ctx.h, ended(ctx, 3), 'the third turn to end');
    const third = server.requests[3]!;
    if (third.body.previous_response_id !== undefined) {
      // Responses continues the second turn's response: what the server holds is that request
      // (checked above) and its answer, so only the new message is sent.
      expect(third.body.previous_response_id).toBe(server.requests[2]!.responseId);
      expect(transcript(third.body)).toEqual(['user: Someone: thanks']);
    } else expect(route).toBe('deep');
    const replayed = third.body.previous_response_id === undefined ? transcript(third.body) : [...transcript(server.requests[2]!.body), 'assistant: Sorted.', ...transcript(third.body)];
    expect(replayed).toEqual([
      'user: Someone: add a dueDate',
      'assistant: Editing both files.\n(Tool steps: edited 2 files +2 −1.)\nAdded `dueDate`.',
      'user: Someone: then sort the tasks',
      'assistant: Sorted.',
      'user: Someone: thanks',
    ]);
    await ctx.close();
  });

  it('Stop mid-hunk ends the turn and keeps what was written', async () => {
    const ctx = setup();
    server.requests.length = 0;
    server.respondOnceWith(patchCall({ chunkChars: 2, tokensPerSecond: 400 }));
    void ctx.alice.threadSend({ text: 'add a dueDate', route });
    await untilRealIo(ctx.h, () => ctx.task.toString().includes('dueD'), 'the first hunk to stream in');
    void ctx.bob.threadStop();
    await untilRealIo(ctx.h, ended(ctx), 'the turn to end');
    expect(ctx.view().turns[0]!.status).toBe('cancelled');
    expect(ctx.task.toString()).toContain('dueD');
    await untilRealIo(ctx.h, () => server.requests[0]!.outcome === 'client-closed', 'the provider request to be closed');
    expect(server.requests).toHaveLength(1);
    await ctx.close();
  });
});
