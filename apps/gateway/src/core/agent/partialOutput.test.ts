/**
 * A turn whose stream fails or is interrupted keeps what arrived ([P20], [P23]; DESIGN §5 step 7;
 * stream-diff [D19]): everything the provider sent, a trailing partial line included, is in the
 * file as pending hunks, the original it had not reached is still there, and a reject restores
 * the original exactly. The real gateway, on a fake clock with in-memory sockets, and the real
 * Chat Completions adapter behind the circuit breaker (as deployed), reading the fake provider
 * on loopback while it drops, garbles, stalls or fails the answer halfway.
 */
import { viewHunks } from '@flint/change-set';
import type { AgentErrorCode, TurnInfo } from '@flint/protocol';
import { FakeClock, FakeOpenAIServer, fakeFaults, until as waitUntil, type FakeScript } from '@flint/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatCompletionsProvider } from '../../models/ChatCompletionsProvider';
import { withCircuitBreaker } from '../../models/CircuitBreaker';
import type { ModelEvent, ModelProvider } from '../ports/ModelProvider';
import { SqliteStore } from '../../storage/SqliteStore';
import { fileIdOf, Harness, textOf } from '../../../test/testHarness';
import type { ModelRouter } from './ModelRouter';

const header = '// Prices of a cart.\n';
const region = 'export function total(items) {\n  let sum = 0;\n  for (const item of items) {\n    sum += item.price * item.qty;\n  }\n  return sum;\n}\n';
const footer = '\nexport const empty = total([]);\n';
const file = header + region + footer;
/** The lines of the original after its first: a rewrite cut off in its first lines reaches none of them. */
const unreached = region.slice(region.indexOf('  let sum'));

/** The model's rewrite; cut into deltas of 8 characters, 12 deltas are its first three lines. */
const answer = [
  'export const total = (items) =>\n',
  '  items.reduce((sum, it) => sum\n',
  '    + it.price * it.amount, 0);\n',
  '// An empty cart totals 0.\n',
  'export const none = total([]);\n',
].join('');
const threeLines = answer.slice(0, 96);
/** Three lines and half of the fourth. */
const partialLine = answer.slice(0, 112);
const script = (fault: FakeScript['fault']): Partial<FakeScript> => ({ text: answer, chunkChars: 8, fault });

let server: FakeOpenAIServer;
beforeAll(async () => {
  server = await FakeOpenAIServer.start();
});
afterAll(async () => {
  await server.close();
});

/** The adapter, noting the text it hands to the turn. */
function recording<P extends ModelProvider>(inner: P): P & { received: string } {
  const provider = {
    ...inner,
    received: '',
    stream: (request: Parameters<ModelProvider['stream']>[0], signal: AbortSignal): AsyncIterable<ModelEvent> => ({
      [Symbol.asyncIterator]: () => {
        const events = inner.stream(request, signal)[Symbol.asyncIterator]();
        return {
          next: async () => {
            const result = await events.next();
            if (!result.done && result.value.type === 'text') provider.received += result.value.text;
            return result;
          },
          return: async () => (await events.return?.()) ?? { done: true as const, value: undefined },
        };
      },
    }),
  };
  return provider;
}

async function setup({ idleTimeoutMs = 10_000 } = {}) {
  const clock = new FakeClock();
  const chat = new ChatCompletionsProvider({ baseUrl: server.baseUrl, apiKey: 'sk-test', idleTimeoutMs, includeUsage: false });
  // One failure opens the circuit, so a test can open it with one failing request.
  const provider = recording(withCircuitBreaker(chat, { clock, failureThreshold: 1 }));
  const models: ModelRouter = () => ({ provider, model: 'spark-test', contextTokens: 128_000, supportsPrediction: false });
  const h = new Harness(new SqliteStore(':memory:'), {}, models, clock);
  const ws = h.gateway.createWorkspace('Partial', { 'src/cart.ts': file, 'src/other.ts': 'export {};\n' });
  const alice = h.client(ws.workspaceId, ws.owner.token);
  const bob = h.client(ws.workspaceId, ws.owner.token);
  h.flush();
  const fileId = fileIdOf(alice, 'src/cart.ts');
  const aliceText = textOf(alice, fileId);
  const bobText = textOf(bob, fileId);
  h.flush();
  return { h, provider, alice, bob, fileId, aliceText, bobText };
}
type Ctx = Awaited<ReturnType<typeof setup>>;

/**
 * Runs the gateway — its flushes on the fake clock, its sockets in memory — while the adapter's
 * real socket does its I/O, until `done` holds. A flush interval of fake time per turn of the
 * loop: held provider reads are let in at the turn's next flush.
 */
function until(h: Harness, done: () => boolean, what: string): Promise<void> {
  return waitUntil(done, what, { step: () => h.flush(), wait: () => new Promise((resolve) => (h.clock.advance(8), setTimeout(resolve, 1))) });
}

/** Prompts a rewrite of the function; resolves with the turn's id once it streams. */
async function promptRewrite(ctx: Ctx, fileId = ctx.fileId, anchor = header.length, head = header.length + region.length): Promise<string> {
  let answer: Awaited<ReturnType<Ctx['alice']['prompt']>> | null = null;
  void ctx.alice.prompt({ fileId, anchor, head, instruction: 'use reduce' }).then((a) => (answer = a));
  await until(ctx.h, () => answer !== null, 'the prompt to be answered');
  const result = answer as unknown as Awaited<ReturnType<Ctx['alice']['prompt']>>;
  if (!result.ok || !result.turnId) throw new Error(`prompt refused: ${JSON.stringify(result)}`);
  return result.turnId;
}

async function ended(ctx: Ctx, turnId: string): Promise<TurnInfo> {
  await until(ctx.h, () => ctx.bob.turns.get(turnId)?.status !== 'streaming' && ctx.bob.turns.has(turnId), 'the turn to end');
  return ctx.bob.turns.get(turnId)!;
}

/**
 * What every broken-off turn leaves: the text received, then the original it had not reached,
 * as pending hunks of that turn (the trailing partial line in one), for everyone; a reject
 * brings back the original exactly.
 */
function expectKeptForReview(ctx: Ctx, turnId: string, received: string): void {
  expect(ctx.provider.received).toBe(received);
  const text = ctx.aliceText.toString();
  expect(ctx.bobText.toString()).toBe(text);
  expect(text.slice(0, header.length + received.length)).toBe(header + received);
  expect(text.slice(-footer.length)).toBe(footer);
  const rest = text.slice(header.length + received.length, -footer.length);
  // Then the original from where the text reached: none of the original past it was deleted.
  expect(region.slice(region.length - rest.length)).toBe(rest);
  expect(rest.slice(-unreached.length)).toBe(unreached);

  const hunks = viewHunks(ctx.alice.openDoc(ctx.fileId).doc, ctx.aliceText).filter((h) => h.record.turnId === turnId);
  expect(hunks.length).toBeGreaterThan(0);
  expect(hunks.every((h) => h.record.status === 'pending')).toBe(true);
  const last = hunks.flatMap((h) => h.inserted).sort((a, b) => a.index - b.index).at(-1)!;
  expect(last.index + last.length).toBe(header.length + received.length);

  expect(ctx.bob.review(ctx.fileId, { turnId }, 'reject')).toBeGreaterThan(0);
  ctx.h.flush();
  expect(ctx.aliceText.toString()).toBe(file);
  expect(ctx.bobText.toString()).toBe(file);
}

function expectFailed(turn: TurnInfo, code: AgentErrorCode): void {
  expect(turn.status).toBe('failed');
  expect(turn.error?.code).toBe(code);
  expect(turn.error?.message).toContain('What it wrote before that is in the file for review; the rest of the original is unchanged.');
}

describe('a stream that breaks off keeps what arrived, for review', () => {
  it('[P20] a provider that drops the connection after three lines: all 96 characters are in the file, the turn fails with network', async () => {
    const ctx = await setup();
    server.respondOnceWith(script(fakeFaults.disconnect(12)));
    const turnId = await promptRewrite(ctx);
    const turn = await ended(ctx, turnId);
    expectFailed(turn, 'network');
    expect(turn.error?.message).toMatch(/mid-stream/);
    expectKeptForReview(ctx, turnId, threeLines);
    await ctx.provider.close();
  });

  it('[P20] a malformed event after three and a half lines: the partial line is in the file, the turn fails with bad_response', async () => {
    const ctx = await setup();
    server.respondOnceWith(script(fakeFaults.garbage(14)));
    const turnId = await promptRewrite(ctx);
    expectFailed(await ended(ctx, turnId), 'bad_response');
    expectKeptForReview(ctx, turnId, partialLine);
    await ctx.provider.close();
  });

  it('[P20] a provider that stalls mid-line past the idle timeout: what it sent is in the file, the turn fails with network', async () => {
    // The idle timeout is the adapter's own timer on the socket; the gateway's clock stays fake.
    const ctx = await setup({ idleTimeoutMs: 400 });
    server.respondOnceWith(script(fakeFaults.stall(14)));
    const turnId = await promptRewrite(ctx);
    const turn = await ended(ctx, turnId);
    expectFailed(turn, 'network');
    expect(turn.error?.message).toMatch(/no data for 400 ms/);
    await server.waitFor((s) => s.requests.at(-1)?.outcome === 'client-closed');
    expectKeptForReview(ctx, turnId, partialLine);
    await ctx.provider.close();
  });

  it('[P20] a failure the provider reports in-band mid-answer: what came before it is in the file', async () => {
    const ctx = await setup();
    server.respondOnceWith(script(fakeFaults.failed('server_error', 14)));
    const turnId = await promptRewrite(ctx);
    expectFailed(await ended(ctx, turnId), 'overloaded');
    expectKeptForReview(ctx, turnId, partialLine);
    await ctx.provider.close();
  });

  it('[P20] a drop that opens the circuit mid-stream: the turn keeps its text; the next prompt is refused with circuit_open and writes nothing', async () => {
    // The breaker admits a stream once, at its start: a turn's own stream is never cut by it. A
    // failure mid-stream that opens the circuit ends the turn with that failure, like any other.
    const ctx = await setup();
    server.respondOnceWith(script(fakeFaults.disconnect(14)));
    const turnId = await promptRewrite(ctx);
    expectFailed(await ended(ctx, turnId), 'network');
    expect(ctx.provider.breaker.state).toBe('open');
    const requests = server.requests.length;
    const refused = await promptRewrite(ctx);
    const turn = await ended(ctx, refused);
    expect(turn).toMatchObject({ status: 'failed', error: { code: 'circuit_open' } });
    // Nothing arrived, so there is nothing to review: the message does not say there is.
    expect(turn.error?.message).not.toContain('for review');
    expect(server.requests).toHaveLength(requests);
    expectKeptForReview(ctx, turnId, partialLine);
    await ctx.provider.close();
  });

  it('[P23] Esc mid-line: the provider request is aborted, what it sent is in the file, the turn is cancelled', async () => {
    const ctx = await setup();
    server.respondOnceWith(script(fakeFaults.stall(14)));
    const turnId = await promptRewrite(ctx);
    await until(ctx.h, () => ctx.provider.received === partialLine, 'the text before the stall');
    let answered = false;
    void ctx.bob.cancelTurn(turnId).then((a) => (answered = a.ok));
    const turn = await ended(ctx, turnId);
    expect(answered).toBe(true);
    expect(turn).toMatchObject({ status: 'cancelled', error: null });
    await server.waitFor((s) => s.requests.at(-1)?.outcome === 'client-closed');
    expectKeptForReview(ctx, turnId, partialLine);
    await ctx.provider.close();
  });
});
