import { idRunsOf, viewHunks } from '@flint/change-set';
import { Channel, CloseCode, decodeServerFrame, encodeControl, isDecodeError } from '@flint/protocol';
import { FakeClock } from '@flint/test-kit';
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import type { ModelRouter } from './ModelRouter';
import { drain, ProviderError, ScriptedProvider } from '../../../test/ScriptedProvider';
import { fileIdOf, Harness, hello, textOf } from '../../../test/testHarness';
import { SqliteStore } from '../../storage/SqliteStore';

const original = `export function add(a: number, b: number) {\n  return a + b;\n}\n`;

function setup(files: Record<string, string> = { 'src/math.ts': original }, clock = new FakeClock()) {
  const provider = new ScriptedProvider();
  const models: ModelRouter = (route) => ({ provider, model: route === 'deep' ? 'deep-model' : 'spark-test', contextTokens: 128_000, supportsPrediction: true });
  const h = new Harness(new SqliteStore(':memory:'), {}, models, clock);
  const ws = h.gateway.createWorkspace('Agent', files);
  const editorLink = h.gateway.links.create(ws.workspaceId, 'editor', 'Editor', null);
  const viewerLink = h.gateway.links.create(ws.workspaceId, 'viewer', 'Viewer', null);
  const alice = h.client(ws.workspaceId, ws.owner.token);
  const bob = h.client(ws.workspaceId, editorLink.token);
  h.flush();
  const fileId = fileIdOf(alice, 'src/math.ts');
  const aliceText = textOf(alice, fileId);
  const bobText = textOf(bob, fileId);
  h.flush();
  return { h, ws, provider, alice, bob, fileId, aliceText, bobText, viewerToken: viewerLink.token };
}

async function promptTurn(ctx: ReturnType<typeof setup>, start: number, end: number, instruction = 'rewrite') {
  const answer = await ctx.h.answered(ctx.alice.prompt({ fileId: ctx.fileId, anchor: start, head: end, instruction }));
  if (!answer.ok || !answer.turnId) throw new Error(`prompt refused: ${JSON.stringify(answer)}`);
  return answer.turnId;
}

/** A turn writing into an empty file; returns Bob's copy of its text. */
async function promptIntoEmptyFile(clock?: FakeClock) {
  const ctx = setup({ 'src/math.ts': original, 'empty.ts': '' }, clock);
  const fileId = fileIdOf(ctx.alice, 'empty.ts');
  const text = textOf(ctx.bob, fileId);
  ctx.h.flush();
  expect((await ctx.h.answered(ctx.alice.prompt({ fileId, anchor: 0, head: 0, instruction: 'write' }))).ok).toBe(true);
  return { ctx, text };
}

/** The lengths of the Yjs items holding a text's live characters (of one client, if given). */
function liveItemLengths(text: Y.Text, client?: number): number[] {
  const lengths: number[] = [];
  for (let item = text._start; item !== null; item = item.right) {
    if (!item.deleted && (client === undefined || item.id.client === client)) lengths.push(item.length);
  }
  return lengths;
}

/** Lets the turn consume what the provider emitted, then runs one flush interval. */
async function step(ctx: ReturnType<typeof setup>) {
  await drain();
  ctx.h.clock.advance(8);
  ctx.h.flush();
}

describe('agent inline edits', () => {
  it('applies the first text at once, then what arrives between flushes together at the next, on the turn\'s own timer', async () => {
    const { ctx, text } = await promptIntoEmptyFile(); // nothing for the stream-diff to hold back
    ctx.provider.emit('return ');
    await drain(); // the first text flushes as it arrives
    ctx.h.flush();
    expect(text.toString()).toBe('return ');
    ctx.provider.emit('Number');
    await drain();
    ctx.h.clock.advance(3);
    ctx.provider.emit('(a)');
    await drain();
    ctx.h.flush();
    expect(text.toString()).toBe('return '); // both wait in the turn's buffer for the flush 8 ms after the first
    ctx.h.clock.advance(5);
    ctx.h.flush();
    expect(text.toString()).toBe('return Number(a)');
    ctx.h.clock.advance(30);
    ctx.provider.emit(';');
    await drain(); // after a quiet spell, text goes out at once again
    ctx.h.flush();
    expect(text.toString()).toBe('return Number(a);');
    ctx.provider.end();
    await step(ctx);
  });

  it('streams a rewrite into the file for everyone, one transaction per flush, not per token', async () => {
    const ctx = setup();
    const start = original.indexOf('return');
    const end = original.indexOf(';') + 1;
    const turnId = await promptTurn(ctx, start, end);
    const updatesBefore = ctx.h.gateway.metrics.counter('flint_doc_updates_total');
    for (const token of ['return ', 'Number', '(a)', ' + ', 'Number', '(b);']) ctx.provider.emit(token);
    await step(ctx);
    ctx.provider.end();
    await step(ctx);
    const expected = original.replace('return a + b;', 'return Number(a) + Number(b);');
    expect(ctx.bobText.toString()).toBe(expected);
    expect(ctx.aliceText.toString()).toBe(expected);
    const updates = ctx.h.gateway.metrics.counter('flint_doc_updates_total') - updatesBefore;
    expect(updates).toBeLessThanOrEqual(3);
    expect(ctx.bob.turns.get(turnId)).toMatchObject({ status: 'done', model: 'spark-test', outputTokens: 6 });
    expect(ctx.provider.requests[0]?.prediction).toBe('return a + b;');
    const hunks = viewHunks(ctx.alice.openDoc(ctx.fileId).doc, ctx.aliceText);
    // Word-level changes within one line are one hunk to review, not five.
    expect(hunks).toHaveLength(1);
    expect(hunks[0]?.record.original).toContain('a + b');
    expect(hunks.every((h) => h.record.turnId === turnId)).toBe(true);
  });

  it('asks the provider before it tells the room the turn started (time to first token starts first)', async () => {
    const ctx = setup();
    const statusesQueued = () =>
      ctx.h.net.pairs
        .flatMap((pair) => pair.toClient)
        .map(decodeServerFrame)
        .filter((frame) => !isDecodeError(frame) && frame.channel === Channel.Control && frame.message.type === 'agent.turn').length;
    let statusesWhenAsked = -1;
    const stream = ctx.provider.stream.bind(ctx.provider);
    ctx.provider.stream = (request, signal) => {
      statusesWhenAsked = statusesQueued();
      return stream(request, signal);
    };
    const turnId = await promptTurn(ctx, 0, original.indexOf('\n'));
    expect(statusesWhenAsked).toBe(0);
    expect(ctx.bob.turns.get(turnId)?.status).toBe('streaming');
    ctx.provider.end();
    await step(ctx);
    expect(ctx.bob.turns.get(turnId)?.status).toBe('done');
  });

  it('sends the turn\'s first text on its own: its cursor and status follow once that I/O is done', async () => {
    const { ctx, text } = await promptIntoEmptyFile();
    /** What the gateway queued to the clients since last asked: the frames sent in one turn of the event loop leave as one write. */
    const seen = new Map<object, number>();
    const queued = () =>
      ctx.h.net.pairs.flatMap((pair) => {
        const fresh = pair.toClient.slice(seen.get(pair) ?? 0);
        seen.set(pair, pair.toClient.length);
        return fresh.map((bytes) => {
          const frame = decodeServerFrame(bytes);
          if (isDecodeError(frame)) throw new Error(frame.error);
          if (frame.channel !== Channel.Control) return frame.channel === Channel.Sync ? 'text' : 'cursor';
          return frame.message.type === 'agent.turn' ? `status ${frame.message.turn.status}` : frame.message.type;
        });
      });
    queued();
    ctx.provider.emit('export ');
    await drain();
    expect([...new Set(queued())]).toEqual(['text']);
    ctx.h.clock.advance(0);
    expect(queued().sort()).toEqual(['cursor', 'cursor', 'status streaming', 'status streaming']);
    seen.clear();
    ctx.h.flush();
    expect(text.toString()).toBe('export ');
    expect(ctx.bob.turns.get([...ctx.bob.turns.keys()][0]!)?.ttftMs).not.toBeNull();
    // Later text goes out with its cursor and status as before; a turn that ends first sends
    // no stale "streaming" after its end.
    ctx.provider.emit('const a = 1;\n');
    ctx.provider.end();
    await step(ctx);
    expect(ctx.bob.turns.get([...ctx.bob.turns.keys()][0]!)?.status).toBe('done');
  });

  it('a turn that ends before its first text\'s status went out sends its end, and nothing after it', async () => {
    const { ctx } = await promptIntoEmptyFile();
    const statuses: string[] = [];
    ctx.bob.onTurn((turn) => statuses.push(turn.status));
    ctx.provider.emit('export {};\n');
    ctx.provider.end();
    await drain();
    ctx.h.clock.advance(0);
    ctx.h.flush();
    expect(statuses).toEqual(['done']);
  });

  it('[P21] text the diff has not committed yet travels with the agent\'s cursor, so everything received is on screen', async () => {
    const ctx = setup();
    await promptTurn(ctx, 0, original.length);
    const handle = ctx.bob.openDoc(ctx.fileId);
    const agent = () => [...handle.awareness.getStates().values()].find((state) => state.user?.agent === true);
    /** What Bob sees of the rewrite: the text before the agent's cursor, then its provisional text. */
    const seen = () => {
      const state = agent();
      const caret = Y.createAbsolutePositionFromRelativePosition(Y.createRelativePositionFromJSON(state?.selection.head), handle.doc)!.index;
      return ctx.bobText.toString().slice(0, caret) + ((state?.pending as string | undefined) ?? '');
    };
    // A rewrite that shares nothing with the original, a few tokens at a time: the diff cannot
    // tell yet how it aligns and commits nothing, so without provisional text Bob saw nothing.
    let received = '';
    for (const token of ['const ', 'total', ' = ', 'items', '.length']) {
      ctx.provider.emit(token);
      received += token;
      await step(ctx);
      expect(seen(), `after ${JSON.stringify(received)}`).toBe(received);
    }
    expect(agent()?.pending).toBeTruthy();
    ctx.provider.emit(';\n');
    ctx.provider.end();
    await step(ctx);
    await step(ctx);
    expect(agent()).toBeUndefined(); // the turn ended: no cursor, nothing provisional
    expect(ctx.bobText.toString()).toBe('const total = items.length;\n');
  });

  it('sends the text every flush, the agent cursor when it moves, its status at most every 100 ms', async () => {
    const ctx = setup();
    const lines = Array.from({ length: 40 }, (_, i) => `  const v${i} = ${i};\n`);
    await promptTurn(ctx, 0, original.length);
    let statuses = 0;
    ctx.bob.onTurn(() => statuses++);
    let cursorMoves = 0;
    let cursorAt = '';
    const awareness = ctx.bob.openDoc(ctx.fileId).awareness;
    awareness.on('update', () => {
      for (const state of awareness.getStates().values()) {
        if (state.user?.agent !== true) continue;
        const at = JSON.stringify(state.selection);
        if (at !== cursorAt) cursorMoves++;
        cursorAt = at;
      }
    });
    const textBefore = ctx.bobText.toString();
    let textChanges = 0;
    ctx.bobText.observe(() => textChanges++);
    for (const line of lines) {
      ctx.provider.emit(line);
      await step(ctx); // 40 flushes of 8 ms = 320 ms of streaming
    }
    expect(ctx.bobText.toString()).not.toBe(textBefore);
    // The diff holds a line back now and then while it aligns.
    expect(textChanges).toBeGreaterThanOrEqual(15);
    // Writing before the same character, the cursor moves with the text: no message needed.
    expect(cursorMoves).toBeLessThan(textChanges / 2);
    // First text at once, then one per 100 ms of the 320 ms: 4, give or take a flush.
    expect(statuses).toBeGreaterThanOrEqual(3);
    expect(statuses).toBeLessThanOrEqual(5);
    ctx.provider.end();
    await step(ctx);
    expect(ctx.bob.turns.get([...ctx.bob.turns.keys()][0]!)?.status).toBe('done');
  });

  it('text the fence filter held back goes out with the next token, not a flush interval later', async () => {
    const { ctx, text } = await promptIntoEmptyFile();
    ctx.provider.emit('``'); // could still open a code fence: held
    await drain();
    ctx.h.clock.advance(1);
    ctx.h.flush();
    expect(text.toString()).toBe('');
    ctx.provider.emit('export');
    await drain();
    ctx.h.flush(); // no clock advance: the leading edge was not spent on the held text
    expect(text.toString()).toBe('``export');
  });

  it('a rewrite that opens with a blank line shows it with its first token', async () => {
    const { ctx, text } = await promptIntoEmptyFile();
    ctx.provider.emit('\n');
    await drain();
    ctx.h.flush();
    expect(text.toString()).toBe('\n');
    ctx.provider.emit('export {};\n');
    ctx.provider.emit('```');
    ctx.provider.end();
    await step(ctx);
    expect(text.toString()).toBe('\nexport {};');
  });

  it('a client that never opened the file prompts for the region it names, not the end of the file', async () => {
    const ctx = setup();
    // Carol prompts from a list of files, with no copy of this one yet.
    const carol = ctx.h.client(ctx.ws.workspaceId, ctx.ws.owner.token);
    ctx.h.flush();
    const start = original.indexOf('return');
    const end = original.indexOf(';') + 1;
    expect((await ctx.h.answered(carol.prompt({ fileId: ctx.fileId, anchor: start, head: end, instruction: 'swap' }))).ok).toBe(true);
    ctx.provider.emit('return b + a;');
    ctx.provider.end();
    await step(ctx);
    await step(ctx);
    expect(ctx.aliceText.toString()).toBe(original.replace('return a + b;', 'return b + a;'));
  });

  it('reject restores the original exactly; accept keeps the new text', async () => {
    const ctx = setup();
    const turnId = await promptTurn(ctx, 0, original.length);
    ctx.provider.emit('export const add = (a: number, b: number): number => a + b;\n');
    ctx.provider.end();
    await step(ctx);
    await step(ctx);
    expect(ctx.aliceText.toString()).toBe('export const add = (a: number, b: number): number => a + b;\n');
    expect(ctx.bob.review(ctx.fileId, { turnId }, 'reject')).toBeGreaterThan(0);
    ctx.h.flush();
    expect(ctx.aliceText.toString()).toBe(original);
    expect(ctx.bobText.toString()).toBe(original);

    const second = await promptTurn(ctx, 0, 0, 'add a comment');
    ctx.provider.emit('// adds two numbers\nexport function add(a: number, b: number) {');
    ctx.provider.end();
    await step(ctx);
    await step(ctx);
    expect(ctx.provider.requests[1]?.messages.some((m) => m.content.includes('rejected'))).toBe(true);
    ctx.alice.review(ctx.fileId, { turnId: second }, 'accept');
    ctx.h.flush();
    expect(ctx.bobText.toString()).toBe(`// adds two numbers\n${original}`);
    expect(viewHunks(ctx.bob.openDoc(ctx.fileId).doc, ctx.bobText)).toHaveLength(0);
  });

  it('Esc interrupts at once: upstream aborted, written text stays, the rest of the original stays', async () => {
    const ctx = setup();
    const turnId = await promptTurn(ctx, 0, original.length);
    ctx.provider.emit('export function add(a: number, b: number): number {\n');
    await step(ctx);
    const cancelled = ctx.bob.cancelTurn(turnId);
    ctx.h.flush();
    expect(await cancelled).toMatchObject({ ok: true });
    await drain();
    ctx.provider.emit('  SHOULD NOT APPEAR');
    await step(ctx);
    expect(ctx.provider.aborted).toBe(1);
    const text = ctx.aliceText.toString();
    expect(text).not.toContain('SHOULD NOT APPEAR');
    expect(text).toContain('return a + b;');
    expect(ctx.alice.turns.get(turnId)?.status).toBe('cancelled');
    ctx.alice.review(ctx.fileId, { turnId }, 'reject');
    ctx.h.flush();
    expect(ctx.bobText.toString()).toBe(original);
  });

  it('[P24] steering mid-stream continues the same turn from its partial output with the new instruction', async () => {
    const ctx = setup();
    const start = original.indexOf('return');
    const end = original.indexOf(';') + 1;
    const turnId = await promptTurn(ctx, start, end, 'use Number');
    ctx.provider.emit('return Number(a)');
    await step(ctx);
    const steered = ctx.bob.steerTurn(turnId, 'use BigInt instead for the rest');
    ctx.h.flush();
    expect(await steered).toMatchObject({ ok: true, turnId });
    await drain();
    ctx.provider.emit(' + BigInt(b);');
    ctx.provider.end();
    await step(ctx);
    await step(ctx);
    expect(ctx.provider.requests).toHaveLength(2);
    const followUp = ctx.provider.requests[1]!.messages;
    expect(followUp.at(-2)).toEqual({ role: 'assistant', content: 'return Number(a)' });
    expect(followUp.at(-1)?.content).toContain('use BigInt instead for the rest');
    expect(ctx.aliceText.toString()).toBe(original.replace('return a + b;', 'return Number(a) + BigInt(b);'));
    expect(ctx.alice.turns.get(turnId)?.status).toBe('done');
  });

  it('a provider failure mid-stream ends the turn with a typed error and keeps what was written', async () => {
    const ctx = setup();
    const turnId = await promptTurn(ctx, 0, original.length);
    ctx.provider.emit('export function add(a: number, b: number): number {\n');
    await step(ctx);
    ctx.provider.fail(new ProviderError('rate_limited', 'Rate limited by the provider.', 1500));
    await step(ctx);
    expect(ctx.bob.turns.get(turnId)).toMatchObject({ status: 'failed', error: { code: 'rate_limited', retryAfterMs: 1500 } });
    expect(ctx.aliceText.toString()).toContain('return a + b;');
  });

  it('refuses prompts with a clear reason: no model, busy file, viewer', async () => {
    const ctx = setup();
    const h2 = new Harness();
    const ws2 = h2.gateway.createWorkspace('No model', { 'a.ts': 'x\n' });
    const lonely = h2.client(ws2.workspaceId, ws2.owner.token);
    h2.flush();
    const refused = h2.answered(lonely.prompt({ fileId: fileIdOf(lonely, 'a.ts'), anchor: 0, head: 0, instruction: 'x' }));
    expect(await refused).toMatchObject({ ok: false, code: 'not_configured' });

    await promptTurn(ctx, 0, 5);
    const busy = ctx.h.answered(ctx.bob.prompt({ fileId: ctx.fileId, anchor: 0, head: 5, instruction: 'again' }));
    expect(await busy).toMatchObject({ ok: false, code: 'busy' });

    const viewer = ctx.h.openRaw();
    hello(viewer, ctx.ws.workspaceId, ctx.viewerToken);
    ctx.h.flush();
    viewer.client.send(encodeControl({ type: 'agent.prompt', requestId: 1, fileId: ctx.fileId, anchor: '', head: '', instruction: 'x', route: 'fast' }));
    ctx.h.flush();
    expect(viewer.closeCode).toBe(CloseCode.Forbidden);
  });

  it('[P20] a tab that joins mid-turn learns of the streaming turn at once', async () => {
    const ctx = setup();
    const turnId = await promptTurn(ctx, 0, original.length);
    ctx.provider.emit('export ');
    await step(ctx);
    const late = ctx.h.client(ctx.ws.workspaceId, ctx.ws.owner.token);
    ctx.h.flush();
    expect(late.turns.get(turnId)).toMatchObject({ status: 'streaming', model: 'spark-test' });
  });

  it('the agent writes under its own client id; people typing during the turn keep theirs', async () => {
    const ctx = setup();
    const end = original.indexOf('{') + 1;
    const turnId = await promptTurn(ctx, 0, end);
    ctx.provider.emit('export function add(a: number, b: number): number {\n');
    await step(ctx);
    // Alice types at the end of the file while the agent writes; then the agent goes on.
    ctx.aliceText.insert(ctx.aliceText.length, '// alice\n');
    ctx.h.flush();
    ctx.provider.emit('// more\n');
    ctx.provider.end();
    await step(ctx);
    const agentClient = ctx.bob.turns.get(turnId)?.agentClient ?? -1;
    const text = ctx.bobText.toString();
    const authorAt = (index: number) => idRunsOf(ctx.bobText, index, index + 1)[0]?.client;
    // The stream-diff keeps the original's matching characters: only ': number' is new there.
    expect(authorAt(text.indexOf('): number') + 1)).toBe(agentClient);
    expect(authorAt(text.indexOf('export'))).not.toBe(agentClient);
    expect(authorAt(text.indexOf('// more'))).toBe(agentClient);
    expect(authorAt(text.indexOf('// alice'))).toBe(ctx.alice.openDoc(ctx.fileId).doc.clientID);
    expect(authorAt(text.indexOf('return'))).not.toBe(agentClient);
    // A second turn writes as the same agent client, in a later clock range: each turn's hunks
    // hold only that turn's characters, and the doc gains no client per prompt.
    const clients = ctx.bob.openDoc(ctx.fileId).doc.store.clients.size;
    const second = await promptTurn(ctx, text.indexOf('// alice'), text.indexOf('// alice') + 8);
    ctx.provider.emit('// bob\n');
    ctx.provider.end();
    await step(ctx);
    expect(ctx.bob.turns.get(second)?.agentClient).toBe(agentClient);
    expect(authorAt(ctx.bobText.toString().indexOf('bob'))).toBe(agentClient);
    expect(ctx.bob.openDoc(ctx.fileId).doc.store.clients.size).toBe(clients);
    const hunks = viewHunks(ctx.bob.openDoc(ctx.fileId).doc, ctx.bobText);
    const textOfTurn = (turn: string) => hunks.filter((h) => h.record.turnId === turn).flatMap((h) => h.inserted.map((r) => ctx.bobText.toString().slice(r.index, r.index + r.length))).join('');
    expect(textOfTurn(second)).toContain('bob');
    expect(textOfTurn(turnId)).toContain('// more');
    expect(textOfTurn(turnId)).not.toContain('bob');
  });

  it('a rewrite of the top of a function that keeps the rest: one hunk, the rest untouched', async () => {
    const words = 'amber basil cedar delta ember fjord gable heron inlet juniper kestrel lagoon marsh nectar orchid pewter quartz raven sable thistle umber violet willow xenon yarrow zephyr acorn birch clover dune'.split(' ');
    const line = (i: number) => `  const ${words[i % 30]}${i} = ${words[(i * 7 + 3) % 30]}.${words[(i * 11 + 5) % 30]}(${i * 37});\n`;
    const body = Array.from({ length: 30 }, (_, i) => line(i)).join('');
    const ctx = setup({ 'src/math.ts': body });
    const turnId = await promptTurn(ctx, 0, body.length);
    // The model replaces the first 10 lines (358 characters) with 40 of its own, then writes the
    // other 20 as they were, a few lines per flush.
    const fresh = Array.from({ length: 40 }, (_, i) => `  let total${i} = await fetchRows(${i}, { limit: ${i * 5} });\n`);
    const rest = Array.from({ length: 20 }, (_, i) => line(i + 10));
    const lines = [...fresh, ...rest];
    for (let i = 0; i < lines.length; i += 3) {
      ctx.provider.emit(lines.slice(i, i + 3).join(''));
      await step(ctx);
    }
    ctx.provider.end();
    await step(ctx);
    await step(ctx);
    expect(ctx.bobText.toString()).toBe(lines.join(''));
    const hunks = viewHunks(ctx.bob.openDoc(ctx.fileId).doc, ctx.bobText, (r) => r.turnId === turnId);
    // One change, and the 20 unchanged lines are the original's characters, not a re-insert
    // (give or take the seam line, which may keep the deleted line's indentation and keyword).
    expect(hunks).toHaveLength(1);
    expect(hunks[0]!.record.original.length).toBeLessThanOrEqual(body.length - rest.join('').length + line(10).length);
    const keptBottom = idRunsOf(ctx.bobText, ctx.bobText.length - rest.slice(1).join('').length, ctx.bobText.length);
    expect(keptBottom.every((run) => run.client !== ctx.bob.turns.get(turnId)?.agentClient)).toBe(true);
  });

  it('a rewrite streamed over many flushes is one Yjs item in the text, not one per flush', async () => {
    const ctx = setup();
    const turnId = await promptTurn(ctx, 0, original.length);
    for (let i = 0; i < 20; i++) {
      ctx.provider.emit(`  const v${i} = ${i};\n`);
      await step(ctx);
    }
    ctx.provider.end();
    await step(ctx);
    // Hunk records are written under the gateway's own id, so the agent's clocks stay contiguous
    // and Yjs merges each flush's insert into the previous one.
    expect(liveItemLengths(ctx.bobText, ctx.bob.turns.get(turnId)?.agentClient)).toHaveLength(1);
    expect(ctx.bobText.toString()).toContain('  const v19 = 19;\n');
  });

  it('a long rewrite is items of a few KB: merging stops before re-encoding a run costs more than it saves', async () => {
    const ctx = setup();
    const turnId = await promptTurn(ctx, 0, original.length);
    const line = `  const value = items.length * 42 + weigh(${'x'.repeat(60)});\n`;
    for (let i = 0; i < 60; i++) {
      ctx.provider.emit(line.repeat(5)); // ~500 characters a flush, ~30 KB in all
      await step(ctx);
    }
    ctx.provider.end();
    await step(ctx);
    const lengths = liveItemLengths(ctx.bobText, ctx.bob.turns.get(turnId)?.agentClient);
    const total = lengths.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(29_000);
    expect(Math.max(...lengths)).toBeLessThanOrEqual(4096 + line.length * 5);
    expect(lengths.length).toBeLessThanOrEqual(Math.ceil(total / 4096) + 1);
  });

  it('turns that keep appending where the last one stopped still make items of a few KB', async () => {
    const { ctx, text } = await promptIntoEmptyFile();
    const chunk = `  const value = items.length * 42 + weigh(${'x'.repeat(60)});\n`.repeat(20); // ~2 KB a turn
    for (let turn = 0; turn < 9; turn++) {
      if (turn > 0) {
        const fileId = fileIdOf(ctx.alice, 'empty.ts');
        const end = textOf(ctx.alice, fileId).length;
        expect((await ctx.h.answered(ctx.alice.prompt({ fileId, anchor: end, head: end, instruction: 'more' }))).ok).toBe(true);
      }
      ctx.provider.emit(chunk);
      ctx.provider.end();
      await step(ctx);
      await step(ctx);
    }
    const lengths = liveItemLengths(text);
    expect(lengths.reduce((a, b) => a + b, 0)).toBeGreaterThan(9 * chunk.length - 1);
    expect(Math.max(...lengths)).toBeLessThanOrEqual(4096 + chunk.length);
  });

  it('publishes the agent\'s cursor labelled with the model name while it writes', async () => {
    const ctx = setup();
    const turnId = await promptTurn(ctx, 0, original.length);
    ctx.provider.emit('export ');
    await step(ctx);
    const agentClient = ctx.bob.turns.get(turnId)?.agentClient ?? -1;
    const state = ctx.bob.openDoc(ctx.fileId).awareness.getStates().get(agentClient);
    expect(state).toMatchObject({ user: { name: 'spark-test (AI)' } });
    ctx.provider.end();
    await step(ctx);
    expect(ctx.bob.openDoc(ctx.fileId).awareness.getStates().has(agentClient)).toBe(false);
    // The next turn's cursor shows too: its awareness clock goes on from the removed state's.
    const next = await promptTurn(ctx, 0, 6);
    expect(ctx.bob.turns.get(next)?.agentClient).toBe(agentClient);
    ctx.provider.emit('// next');
    await step(ctx);
    expect(ctx.bob.openDoc(ctx.fileId).awareness.getStates().get(agentClient)).toMatchObject({ user: { name: 'spark-test (AI)' } });
  });

  it('the agent\'s cursor resolves to where it writes next, in every browser\'s copy', async () => {
    const ctx = setup();
    const caretIndex = (turnId: string) => {
      const handle = ctx.bob.openDoc(ctx.fileId);
      const state = handle.awareness.getStates().get(ctx.bob.turns.get(turnId)?.agentClient ?? -1) as { selection: { head: unknown } };
      return Y.createAbsolutePositionFromRelativePosition(Y.createRelativePositionFromJSON(state.selection.head), handle.doc)?.index;
    };
    // Rewriting the first line: the caret sits before the original text the stream has not passed.
    const first = original.indexOf('\n');
    const turnId = await promptTurn(ctx, 0, first);
    // The agent inserts before the original; what the stream-diff committed so far is in.
    const written = '// adds two numbers\n// more';
    ctx.provider.emit(written);
    await step(ctx);
    const shown = ctx.bobText.toString();
    const committed = shown.slice(0, shown.length - original.length);
    expect(shown.endsWith(original) && committed.length > 0 && written.startsWith(committed)).toBe(true);
    expect(caretIndex(turnId)).toBe(committed.length);
    ctx.provider.end();
    await step(ctx);
    // Writing at the end of the file: the caret follows the last character written.
    const end = ctx.bobText.length;
    const second = await promptTurn(ctx, end, end);
    ctx.provider.emit('export const one = 1;');
    await step(ctx);
    expect(ctx.bobText.toString().endsWith('export const one = 1;')).toBe(true);
    expect(caretIndex(second)).toBe(ctx.bobText.length);
  });
});

