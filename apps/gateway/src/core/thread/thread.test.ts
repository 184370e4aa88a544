import { hunksOf } from '@flint/change-set';
import { CloseCode, encodeControl, readThread, type ThreadView } from '@flint/protocol';
import { FakeClock } from '@flint/test-kit';
import { describe, expect, it } from 'vitest';
import type { ModelEvent, ModelProvider, ModelRequest } from '../ports/ModelProvider';
import { ProviderError } from '../ports/ModelProvider';
import { SqliteStore } from '../../storage/SqliteStore';
import { defaultConfig } from '../GatewayConfig';
import type { ModelRouter } from '../agent/ModelRouter';
import { drain } from '../../../test/ScriptedProvider';
import { fileIdOf, Harness, hello, textOf } from '../../../test/testHarness';
import { formatTs, taskTs, twoFilePatch } from './threadFixtures';

/** A step of a scripted answer: a model event, a pause until `release()`, or a failure. */
type Beat = ModelEvent | 'pause' | ProviderError;

/**
 * A provider whose answers are scripted per call, that pauses where told: a model that calls
 * tools, for the thread's loop. Records every request, as the model would see it.
 */
class ToolScript implements ModelProvider {
  readonly kind = 'scripted-tools';
  readonly requests: ModelRequest[] = [];
  private readonly answers: Beat[][] = [];
  private wake: (() => void) | null = null;

  answer(...beats: Beat[]): this {
    this.answers.push(beats);
    return this;
  }

  release(): void {
    this.wake?.();
  }

  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent> {
    this.requests.push(structuredClone(request));
    const beats = this.answers.shift() ?? [{ type: 'text', text: 'Done.' }];
    const self = this;
    return (async function* () {
      for (const beat of beats) {
        if (signal.aborted) return;
        if (beat === 'pause') {
          await new Promise<void>((resolve) => {
            self.wake = resolve;
            signal.addEventListener('abort', () => resolve(), { once: true });
          });
          self.wake = null;
          if (signal.aborted) return;
          continue;
        }
        if (beat instanceof ProviderError) throw beat;
        yield beat;
        await Promise.resolve();
      }
      yield { type: 'usage', inputTokens: 100, outputTokens: 10, cachedInputTokens: 0 };
      yield { type: 'done', finishReason: beats.some((b) => typeof b === 'object' && 'type' in b && b.type === 'tool-call') ? 'tool_calls' : 'stop' };
    })();
  }

  async close(): Promise<void> {}
}

const call = (index: number, name: string, args: unknown, pieces = 1): ModelEvent[] => {
  const json = JSON.stringify(args);
  const size = Math.ceil(json.length / pieces);
  const deltas: ModelEvent[] = [];
  for (let at = 0; at < json.length; at += size) deltas.push({ type: 'tool-call-delta', index, arguments: json.slice(at, at + size) });
  return [{ type: 'tool-call', index, id: `call_${index}_${name}`, name }, ...deltas];
};
const text = (value: string): ModelEvent => ({ type: 'text', text: value });


function setup(options: { supportsTools?: boolean; kind?: string; contextTokens?: number; files?: Record<string, string>; agent?: Partial<typeof defaultConfig.agent> } = {}) {
  const provider = new ToolScript();
  if (options.kind) (provider as { kind: string }).kind = options.kind;
  const models: ModelRouter = () => ({ provider, model: 'spark-test', contextTokens: options.contextTokens ?? 128_000, supportsPrediction: false, supportsTools: options.supportsTools ?? true });
  const store = new SqliteStore(':memory:');
  const h = new Harness(store, { agent: { ...defaultConfig.agent, ...options.agent } }, models, new FakeClock());
  const ws = h.gateway.createWorkspace('Thread', { 'src/task.ts': taskTs, 'src/format.ts': formatTs, ...options.files });
  const editor = h.gateway.links.create(ws.workspaceId, 'editor', 'Editor', null);
  const viewer = h.gateway.links.create(ws.workspaceId, 'viewer', 'Viewer', null);
  const alice = h.client(ws.workspaceId, ws.owner.token, { user: { name: 'Alice', color: '#ff0000' } } as never);
  const bob = h.client(ws.workspaceId, editor.token);
  h.flush();
  const bobThread = bob.openThread();
  alice.openThread();
  const files = { task: fileIdOf(bob, 'src/task.ts'), format: fileIdOf(bob, 'src/format.ts') };
  const bobTask = textOf(bob, files.task);
  const bobFormat = textOf(bob, files.format);
  h.flush();
  const view = (): ThreadView => readThread(bobThread.doc);
  return { h, ws, provider, alice, bob, files, bobTask, bobFormat, view, viewerToken: viewer.token };
}

/** Lets the turn run: provider events, flush timers, the sockets. */
async function run(ctx: ReturnType<typeof setup>, rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    await drain();
    ctx.h.clock.advance(8);
    ctx.h.flush();
  }
}

async function send(ctx: ReturnType<typeof setup>, who: 'alice' | 'bob', message: string, mode: 'send' | 'queue' = 'send') {
  const result = ctx[who].threadSend({ text: message, mode });
  ctx.h.flush();
  await drain();
  ctx.h.flush();
  return result;
}

describe('the agent thread', () => {
  it('runs a two-file turn: reads, streams one patch into both files, answers; everyone sees it', async () => {
    const ctx = setup();
    ctx.provider
      .answer(...call(0, 'read_file', { path: 'src/task.ts' }), ...call(1, 'read_file', { path: 'src/format.ts' }))
      .answer(text('Adding the field. '), ...call(0, 'apply_patch', { patch: twoFilePatch }, 40))
      .answer(text('Added `dueDate` to **Task** and shown it in formatTask.'));
    expect((await send(ctx, 'alice', 'add a dueDate to Task and show it in formatTask')).ok).toBe(true);
    await run(ctx, 60);

    expect(ctx.bobTask.toString()).toContain('  dueDate?: string;\n}');
    expect(ctx.bobFormat.toString()).toContain('task.dueDate ? `${task.title} (due ${task.dueDate})` : task.title;');

    const view = ctx.view();
    expect(view.messages.map((m) => [m.kind, m.summary ?? m.text])).toEqual([
      ['user', 'add a dueDate to Task and show it in formatTask'],
      ['tool', 'read src/task.ts'],
      ['tool', 'read src/format.ts'],
      ['assistant', 'Adding the field. '],
      ['tool', 'edited 2 files +2 −1'],
      ['assistant', 'Added `dueDate` to **Task** and shown it in formatTask.'],
    ]);
    const turn = view.turns[0]!;
    expect(turn.status).toBe('done');
    expect(turn.files.map((f) => [f.path, f.added, f.removed])).toEqual([
      ['src/task.ts', 1, 0],
      ['src/format.ts', 1, 1],
    ]);
    expect(turn.toolCalls).toBe(3);
    expect(turn.steps).toBe(3);
    // The model got each tool's result, in the protocol's shape, and the patch's outcome.
    const last = ctx.provider.requests[2]!.messages;
    expect(last.at(-2)).toMatchObject({ role: 'assistant', toolCalls: [{ name: 'apply_patch' }] });
    expect(last.at(-1)).toEqual({ role: 'tool', callId: 'call_0_apply_patch', content: 'updated src/task.ts (+1 -0)\nupdated src/format.ts (+1 -1)' });
    expect(ctx.provider.requests[1]!.messages.some((m) => m.role === 'tool' && m.content.startsWith('src/task.ts (4 lines):'))).toBe(true);
    expect(ctx.provider.requests[0]!.tools?.map((t) => t.name)).toContain('apply_patch');
    // Its edits are hunks of the turn, for review in every file.
    const hunks = [...hunksOf(ctx.bob.openDoc(ctx.files.format).doc).values()];
    expect(hunks.every((h) => h.turnId === turn.turnId && h.status === 'pending')).toBe(true);
    expect(turn.agentClients[ctx.files.format]).toBe(hunks[0]!.agentClient);
  });

  it('shows the patch in the files while it streams, before the call ends', async () => {
    const ctx = setup();
    const json = JSON.stringify({ patch: twoFilePatch });
    ctx.provider.answer(...call(0, 'apply_patch', { patch: '' }).slice(0, 1), { type: 'tool-call-delta', index: 0, arguments: json.slice(0, json.indexOf('dueDate?') + 20) }, 'pause');
    await send(ctx, 'alice', 'add a dueDate');
    await run(ctx);
    expect(ctx.bobTask.toString()).toContain('  dueDate?: string;\n}');
    expect(ctx.bobFormat.toString()).toBe(formatTs);
    const turn = ctx.view().turns[0]!;
    expect(turn.status).toBe('streaming');
    expect(turn.files).toEqual([expect.objectContaining({ path: 'src/task.ts', added: 1, removed: 0 })]);
    expect(ctx.view().messages.at(-1)).toMatchObject({ kind: 'tool', status: 'running', summary: 'editing src/task.ts' });
  });

  it('lets anyone with edit rights steer mid-hunk: the generation stops, its text stays, the model continues with the message', async () => {
    const ctx = setup();
    const json = JSON.stringify({ patch: twoFilePatch });
    const cut = json.indexOf('dueDate?') + 4;
    ctx.provider.answer(...call(0, 'apply_patch', { patch: '' }).slice(0, 1), { type: 'tool-call-delta', index: 0, arguments: json.slice(0, cut) }, 'pause');
    ctx.provider.answer(text('OK, skipping the format change.'));
    await send(ctx, 'alice', 'add a dueDate');
    await run(ctx);
    expect(ctx.bobTask.toString()).toContain('  dueD');
    expect((await send(ctx, 'bob', 'only the interface, please')).ok).toBe(true);
    await run(ctx);
    expect(ctx.bobTask.toString()).toContain('  dueD'); // what was written stays
    const view = ctx.view();
    expect(view.messages.find((m) => m.steer)?.text).toBe('only the interface, please');
    expect(view.turns).toHaveLength(1);
    expect(view.turns[0]!.status).toBe('done');
    const second = ctx.provider.requests[1]!.messages;
    expect(second.at(-1)!.content).toMatch(/only the interface, please\n\(You were interrupted/);
    expect(second.at(-2)!.content).toMatch(/updated src\/task\.ts \(\+0 -0\)\n\[interrupted\]|\[interrupted\]/);
    expect(view.messages.at(-1)?.text).toBe('OK, skipping the format change.');
  });

  it('Stop mid-hunk ends the turn cancelled and keeps what was written', async () => {
    const ctx = setup();
    const json = JSON.stringify({ patch: twoFilePatch });
    ctx.provider.answer(...call(0, 'apply_patch', { patch: '' }).slice(0, 1), { type: 'tool-call-delta', index: 0, arguments: json.slice(0, json.indexOf('dueDate?') + 12) }, 'pause');
    await send(ctx, 'alice', 'add a dueDate');
    await run(ctx);
    const stopped = ctx.bob.threadStop();
    await run(ctx);
    expect((await stopped).ok).toBe(true);
    expect(ctx.view().turns[0]!.status).toBe('cancelled');
    expect(ctx.bobTask.toString()).toContain('dueDate?');
    expect(ctx.provider.requests).toHaveLength(1);
  });

  it('a search yields between slices of its work: another workspace\'s keystroke is served meanwhile, and Stop ends the turn there', async () => {
    const ctx = setup({ files: { 'big.txt': `${'a'.repeat(1999)}!\n`.repeat(300) } });
    const other = ctx.h.gateway.createWorkspace('Other', { 'o.ts': 'x' });
    const [carol, dave] = [ctx.h.client(other.workspaceId, other.owner.token), ctx.h.client(other.workspaceId, other.owner.token)];
    ctx.h.flush();
    const [carolText, daveText] = [textOf(carol, fileIdOf(carol, 'o.ts')), textOf(dave, fileIdOf(dave, 'o.ts'))];
    ctx.h.flush();
    ctx.provider.answer(...call(0, 'search', { query: 'a!b', regex: true }));
    await send(ctx, 'alice', 'find a!b');
    await run(ctx, 3);
    // The search is still going (no second model call), and the other workspace is served.
    expect(ctx.provider.requests).toHaveLength(1);
    carolText.insert(0, 'k');
    ctx.h.flush();
    expect(daveText.toString()).toBe('kx');
    const stopped = ctx.bob.threadStop();
    await run(ctx, 100);
    expect((await stopped).ok).toBe(true);
    expect(ctx.view().turns[0]!.status).toBe('cancelled');
    expect(ctx.provider.requests).toHaveLength(1);
  });

  it('a message sent while a search runs reaches the model with the search\'s result', async () => {
    const ctx = setup({ files: { 'big.txt': `${'a'.repeat(1999)}!\n`.repeat(300) } });
    ctx.provider.answer(...call(0, 'search', { query: 'a!b', regex: true })).answer(text('Nothing matches; narrowed to src.'));
    await send(ctx, 'alice', 'find a!b');
    await run(ctx, 3);
    expect(ctx.provider.requests).toHaveLength(1);
    expect((await send(ctx, 'bob', 'only under src/')).ok).toBe(true);
    await run(ctx, 100);
    const second = ctx.provider.requests[1]!.messages;
    expect(second.at(-2)).toMatchObject({ role: 'tool', content: 'No matches.' });
    expect(second.at(-1)!.content).toMatch(/only under src\//);
    expect(ctx.view().turns[0]!.status).toBe('done');
  });

  it('reports a hunk whose context is gone, applies nothing for it, and tells the model', async () => {
    const ctx = setup();
    ctx.bobFormat.delete(0, ctx.bobFormat.length);
    ctx.bobFormat.insert(0, 'export const nothing = 1;\n');
    ctx.h.flush();
    ctx.provider.answer(...call(0, 'apply_patch', { patch: twoFilePatch }, 7)).answer(text('The format file changed; I will read it.'));
    await send(ctx, 'alice', 'add a dueDate');
    await run(ctx, 40);
    expect(ctx.bobFormat.toString()).toBe('export const nothing = 1;\n');
    expect(ctx.bobTask.toString()).toContain('dueDate?');
    const step = ctx.view().messages.find((m) => m.tool === 'apply_patch')!;
    expect(step.summary).toBe('edited src/task.ts +1 −0');
    expect(step.detail).toMatch(/Hunk 1 of src\/format\.ts .*not applied: its @@ line/);
    const toolResult = ctx.provider.requests[1]!.messages.at(-1)!;
    expect(toolResult.content).toMatch(/updated src\/task\.ts \(\+1 -0\)\nHunk 1 of src\/format\.ts/);
  });

  it('tells the next turn what people rejected', async () => {
    const ctx = setup();
    ctx.provider.answer(...call(0, 'apply_patch', { patch: twoFilePatch })).answer(text('Done.'));
    await send(ctx, 'alice', 'add a dueDate');
    await run(ctx, 40);
    const turnId = ctx.view().turns[0]!.turnId;
    expect(ctx.bob.review(ctx.files.format, { turnId }, 'reject')).toBeGreaterThan(0);
    expect(ctx.bobFormat.toString()).toBe(formatTs);
    ctx.h.flush();
    ctx.provider.answer(text('Understood.'));
    await send(ctx, 'alice', 'and now?');
    await run(ctx, 20);
    const prompt = ctx.provider.requests.at(-1)!.messages.at(-1)!.content;
    expect(prompt).toMatch(/src\/format\.ts: Note: in an earlier turn the user rejected/);
  });

  it('queues a message sent with Alt-Enter and runs it after the turn', async () => {
    const ctx = setup();
    ctx.provider.answer(text('first'), 'pause').answer(text('second'));
    await send(ctx, 'alice', 'one');
    await run(ctx, 5);
    await send(ctx, 'bob', 'two', 'queue');
    expect(ctx.view().messages.find((m) => m.text === 'two')?.queued).toBe(true);
    ctx.provider.release();
    await run(ctx, 20);
    const view = ctx.view();
    expect(view.turns.map((t) => t.status)).toEqual(['done', 'done']);
    expect(view.messages.find((m) => m.text === 'two')?.queued).toBeUndefined();
    expect(ctx.provider.requests[1]!.messages.at(-1)!.content).toMatch(/: two$/);
  });

  it('tokens/s counts the time the model streams, not the tools or the wait for the next call', async () => {
    const ctx = setup();
    ctx.provider
      .answer(text('Reading.'), 'pause', text(' The file.'), ...call(0, 'read_file', { path: 'src/task.ts' }))
      .answer('pause', text('It has'), 'pause', text(' a title.'));
    const settle = async () => {
      for (let i = 0; i < 10; i++) {
        await drain();
        ctx.h.flush();
      }
    };
    await send(ctx, 'alice', 'what is in task.ts?');
    await settle();
    // Each answer streams for 1 s; between them the tool runs and the next call waits 5 s for its first token.
    ctx.h.clock.advance(1000);
    ctx.provider.release();
    await settle();
    ctx.h.clock.advance(5000);
    ctx.provider.release();
    await settle();
    ctx.h.clock.advance(1000);
    ctx.provider.release();
    await settle();
    const turn = ctx.view().turns[0]!;
    expect(turn.status).toBe('done');
    // 3 tokens then 2 (text, the call's one argument delta), over 2 s of streaming.
    expect(turn.outputTokens).toBe(5);
    expect(turn.tokensPerSecond).toBeCloseTo(2.5, 5);
  });

  it('stops a loop of identical tool calls with a clear message', async () => {
    const ctx = setup();
    ctx.provider.answer(...call(0, 'list_files', {})).answer(...call(0, 'list_files', {}));
    await send(ctx, 'alice', 'loop');
    await run(ctx, 30);
    const view = ctx.view();
    expect(view.turns[0]!.error?.code).toBe('guardrail');
    expect(view.messages.at(-1)).toMatchObject({ kind: 'notice', text: expect.stringMatching(/called list_files twice in a row/) });
  });

  it('a provider failure mid-patch keeps what was written and says so in the thread', async () => {
    const ctx = setup();
    const json = JSON.stringify({ patch: twoFilePatch });
    ctx.provider.answer(...call(0, 'apply_patch', { patch: '' }).slice(0, 1), { type: 'tool-call-delta', index: 0, arguments: json.slice(0, json.indexOf('dueDate?') + 20) }, new ProviderError('network', 'The connection to the model dropped.'));
    await send(ctx, 'alice', 'add a dueDate');
    await run(ctx, 20);
    const view = ctx.view();
    expect(view.turns[0]!.status).toBe('failed');
    expect(view.messages.at(-1)).toMatchObject({ kind: 'notice', level: 'error', text: expect.stringMatching(/dropped\. What it wrote before that is in the files for review/) });
    expect(ctx.bobTask.toString()).toContain('dueDate?: string;');
  });

  it('viewers watch the thread live but cannot send: the gateway closes a socket that tries', async () => {
    const ctx = setup();
    const viewer = ctx.h.client(ctx.ws.workspaceId, ctx.viewerToken);
    ctx.h.flush();
    const thread = viewer.openThread();
    ctx.provider.answer(text('Hi all.'));
    await send(ctx, 'alice', 'hello');
    await run(ctx, 10);
    expect(readThread(thread.doc).messages.map((m) => m.text)).toEqual(['hello', 'Hi all.']);
    // A hand-made client that sends anyway.
    const raw = ctx.h.openRaw();
    hello(raw, ctx.ws.workspaceId, ctx.viewerToken);
    ctx.h.flush();
    raw.client.send(encodeControl({ type: 'thread.send', requestId: 1, text: 'let me in', route: 'fast', mode: 'send', context: { mentions: [] } }));
    ctx.h.flush();
    expect(raw.closeCode).toBe(CloseCode.Forbidden);
    expect(ctx.view().messages).toHaveLength(2);
  });

  it('the thread survives a gateway restart', async () => {
    const ctx = setup();
    ctx.provider.answer(text('Hello from the model.'));
    await send(ctx, 'alice', 'hi');
    await run(ctx, 10);
    ctx.h.restart();
    const carol = ctx.h.client(ctx.ws.workspaceId, ctx.ws.owner.token);
    ctx.h.flush();
    const thread = carol.openThread();
    ctx.h.flush();
    expect(readThread(thread.doc).messages.map((m) => m.text)).toEqual(['hi', 'Hello from the model.']);
    expect(readThread(thread.doc).turns[0]!.status).toBe('done');
  });

  it('a model without tool calling writes patches in its answer (the demo model), and the panel is told exactly what it does and how to connect a real one', async () => {
    const ctx = setup({ supportsTools: false, kind: 'embedded' });
    ctx.provider.answer(text('Here:\n*** Begin Patch\n*** Update File: src/task.ts\n@@\n   title: string;\n+  done: boolean;\n }\n*** End Patch\nDone.'));
    await send(ctx, 'alice', 'add done');
    await run(ctx, 20);
    expect(ctx.bobTask.toString()).toContain('  title: string;\n  done: boolean;\n}');
    const view = ctx.view();
    expect(view.messages.map((m) => m.kind)).toEqual(['user', 'notice', 'assistant', 'tool']);
    // It says what the demo model does, not that a tool loop runs, and how to get a real one.
    expect(view.messages[1]!.text).toMatch(/bundled demo model, flint-tiny: .* has no tools and follows no instructions/);
    expect(view.messages[1]!.text).not.toMatch(/tool loop|end to end/);
    expect(view.messages[1]!.text).toMatch(/OPENAI_BASE_URL=\S+ OPENAI_API_KEY=\S+ FLINT_MODEL_FAST=\S+ npm start/);
    expect(view.messages[2]!.text).toBe('Here:\nDone.');
    expect(ctx.provider.requests[0]!.tools).toBeUndefined();
  });

  it('keeps the loop within the window: old tool outputs are left out, and the meter says so', async () => {
    const big = `${'const filler = 1;\n'.repeat(500)}`;
    const ctx = setup({ contextTokens: 4000, files: { 'big.ts': big } });
    ctx.provider.answer(...call(0, 'read_file', { path: 'big.ts' })).answer(...call(0, 'list_files', {})).answer(text('Done.'));
    await send(ctx, 'alice', 'read it');
    await run(ctx, 30);
    const third = ctx.provider.requests[2]!.messages;
    expect(third.find((m) => m.role === 'tool')!.content).toMatch(/left out to fit the window/);
    const turn = ctx.view().turns[0]!;
    expect(turn.context.trimmed).toMatch(/1 earlier tool output was left out/);
    expect(turn.context.usedTokens).toBeLessThanOrEqual(4000);
    expect(turn.context.windowTokens).toBe(4000);
  });

  it('Stop drops the messages queued behind the turn, and says so', async () => {
    const ctx = setup();
    ctx.provider.answer(text('first'), 'pause');
    await send(ctx, 'alice', 'one');
    await run(ctx, 5);
    await send(ctx, 'bob', 'two', 'queue');
    const stopped = ctx.bob.threadStop();
    await run(ctx, 10);
    expect((await stopped).ok).toBe(true);
    const view = ctx.view();
    expect(view.turns.map((t) => t.status)).toEqual(['cancelled']);
    expect(view.messages.find((m) => m.text === 'two')?.queued).toBeUndefined();
    expect(view.messages.at(-1)).toMatchObject({ kind: 'notice', text: 'Stopped by Someone; 1 queued message was not sent.' });
    expect(ctx.provider.requests).toHaveLength(1);
  });

  it('a turn cut off by a restart ends as failed, with what it wrote kept for review', async () => {
    const ctx = setup();
    const json = JSON.stringify({ patch: twoFilePatch });
    ctx.provider.answer(...call(0, 'apply_patch', { patch: '' }).slice(0, 1), { type: 'tool-call-delta', index: 0, arguments: json.slice(0, json.indexOf('dueDate?') + 20) }, 'pause');
    await send(ctx, 'alice', 'add a dueDate');
    await run(ctx, 10);
    ctx.h.restart();
    const carol = ctx.h.client(ctx.ws.workspaceId, ctx.ws.owner.token);
    ctx.h.flush();
    const thread = carol.openThread();
    const task = textOf(carol, fileIdOf(carol, 'src/task.ts'));
    ctx.h.flush();
    const view = readThread(thread.doc);
    expect(view.turns[0]).toMatchObject({ status: 'failed', error: { code: 'internal' } });
    expect(view.messages.find((m) => m.kind === 'tool')?.status).toBe('failed');
    expect(view.messages.at(-1)).toMatchObject({ kind: 'notice', level: 'error', text: expect.stringMatching(/restarted while this turn ran/) });
    expect(task.toString()).toContain('dueDate?: string;');
    // And the thread takes the next message.
    ctx.provider.answer(text('Back.'));
    expect((await (async () => { const r = carol.threadSend({ text: 'again' }); await run(ctx, 10); return r; })()).ok).toBe(true);
  });

  it('a room that unloads mid-turn ends the turn first, as cancelled', async () => {
    const ctx = setup();
    ctx.provider.answer(text('thinking'), 'pause');
    await send(ctx, 'alice', 'go');
    await run(ctx, 5);
    const room = (ctx.h.gateway as unknown as { rooms: { get(id: string): { unload(): void; thread: { doc: import('yjs').Doc } } } }).rooms.get(ctx.ws.workspaceId)!;
    const doc = room.thread.doc;
    room.unload();
    expect(readThread(doc).turns[0]!.status).toBe('cancelled');
  });

  it('stops at the turn\'s token budget and its tool-call budget, saying which', async () => {
    const tokens = setup({ agent: { threadTokensPerTurn: 150 } });
    tokens.provider.answer(...call(0, 'list_files', {})).answer(...call(0, 'read_file', { path: 'src/task.ts' })).answer(text('never'));
    await send(tokens, 'alice', 'go');
    await run(tokens, 30);
    expect(tokens.view().turns[0]).toMatchObject({ status: 'cancelled', steps: 2 });
    expect(tokens.view().messages.at(-1)).toMatchObject({ kind: 'notice', text: expect.stringMatching(/used 220 tokens, the most one turn may use/) });

    const calls = setup({ agent: { threadToolCallsPerTurn: 2 } });
    calls.provider.answer(...call(0, 'list_files', {}), ...call(1, 'read_file', { path: 'src/task.ts' })).answer(...call(0, 'search', { query: 'x' }));
    await send(calls, 'alice', 'go');
    await run(calls, 30);
    expect(calls.view().turns[0]).toMatchObject({ status: 'done', toolCalls: 2, error: { code: 'guardrail' } });
    expect(calls.view().messages.at(-1)?.text).toMatch(/made 2 tool calls, the most one turn may make/);
  });

  it('refuses a blank message and a second thread.stop with a clear answer', async () => {
    const ctx = setup();
    expect(await send(ctx, 'alice', '   ')).toMatchObject({ ok: false, code: 'invalid_message' });
    const stop = ctx.alice.threadStop();
    await run(ctx, 3);
    expect(await stop).toMatchObject({ ok: false, code: 'not_found' });
  });

  it('shares one rate with inline edits: a session cannot double its requests by using both', async () => {
    const ctx = setup({ agent: { promptsPerMinute: 1 } });
    ctx.provider.answer(text('ok'));
    expect((await send(ctx, 'alice', 'first')).ok).toBe(true);
    await run(ctx, 5);
    const inline = ctx.alice.prompt({ fileId: ctx.files.task, anchor: 0, head: 0, instruction: 'x' });
    await run(ctx, 5);
    expect(await inline).toMatchObject({ ok: false, code: 'rate_limited' });
  });
});
