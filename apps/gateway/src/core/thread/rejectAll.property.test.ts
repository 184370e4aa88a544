/**
 * Issue 33, DESIGN §11 invariant 4: whatever the agent thread did — several patches to a file in
 * one turn, steers, stops, provider failures, in one or several turns, with people typing —
 * rejecting all of those turns gives back exactly the text before them plus what people typed.
 * Seeded: `SEED` / `ITERATIONS` (a failure prints its seed; replay it with ITERATIONS=1).
 */
import { readThread } from '@flint/protocol';
import { FakeClock, propertyConfig, seededRandom } from '@flint/test-kit';
import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../models/ModelProvider';
import { SqliteStore } from '../../storage/SqliteStore';
import type { ModelRouter } from '../agent/ModelRouter';
import { drain } from '../agent/ScriptedProvider';
import { fileIdOf, Harness, textOf } from '../testHarness';
import { LiveModel, type Beat } from './LiveModel';

/** People type private-use characters: the agent never writes them, so they can be counted. */
const humanChars = /[\ue000-\uf8ff]/g;
const paths = ['src/a.ts', 'src/b.ts'];

type Random = () => number;
const pick = (random: Random, n: number) => Math.floor(random() * n);
type Interrupt = 'steer' | 'stop' | 'fail' | 'type' | 'none';

/** A patch of one or two files, each one or two hunks, written against the files as they are now. */
function patchFor(random: Random, texts: Record<string, string>): string {
  const out = ['*** Begin Patch'];
  for (const path of paths) {
    if (random() < 0.4) continue;
    const lines = texts[path]!.split('\n').slice(0, -1);
    out.push(`*** Update File: ${path}`);
    let at = pick(random, Math.max(1, lines.length - 4));
    for (let h = 0; h < 1 + pick(random, 2) && at < lines.length; h++) {
      out.push('@@');
      const context = 1 + pick(random, 2);
      for (let i = 0; i < context && at < lines.length; i++) out.push(` ${lines[at++]}`);
      const removed = pick(random, 3);
      for (let i = 0; i < removed && at < lines.length; i++) out.push(`-${lines[at++]}`);
      const added = (removed === 0 ? 1 : 0) + pick(random, 3);
      for (let i = 0; i < added; i++) out.push(`+${random() < 0.3 && at > 0 ? `${lines[at - 1]!.slice(0, 8)} ` : ''}let n${pick(random, 1e6)} = ${pick(random, 100)};`);
      if (at < lines.length) out.push(` ${lines[at++]}`);
      at += 1 + pick(random, 3);
    }
  }
  out.push('*** End Patch');
  return `${out.join('\n')}\n`;
}

/** The call's events: an apply_patch with its JSON cut at random, paused once where the plan says. */
function patchCall(random: Random, patch: string, interrupt: Interrupt, index: number): Array<Beat<Interrupt>> {
  const json = JSON.stringify({ patch });
  const beats: Array<Beat<Interrupt>> = [{ type: 'text', text: 'Editing. ' }, { type: 'tool-call', index: 0, id: `call_${index}`, name: 'apply_patch' }];
  const pauseAt = interrupt === 'none' ? -1 : pick(random, json.length);
  for (let at = 0; at < json.length; ) {
    const size = 1 + pick(random, 24);
    if (pauseAt >= at && pauseAt < at + size) beats.push(interrupt === 'fail' ? new ProviderError('network', 'The connection dropped.') : { pause: interrupt });
    beats.push({ type: 'tool-call-delta', index: 0, arguments: json.slice(at, at + size) });
    at += size;
  }
  return beats;
}

function setup() {
  const model = new LiveModel<Interrupt>();
  const models: ModelRouter = () => ({ provider: model, model: 'spark-test', contextTokens: 128_000, supportsPrediction: false, supportsTools: true });
  const h = new Harness(new SqliteStore(':memory:'), {}, models, new FakeClock());
  const files: Record<string, string> = {};
  for (const path of paths) files[path] = Array.from({ length: 12 }, (_, i) => `const ${path[4]}${i} = ${i};`).join('\n') + '\n';
  const ws = h.gateway.createWorkspace('Review', files);
  const editor = h.gateway.links.create(ws.workspaceId, 'editor', 'Editor', null);
  const alice = h.client(ws.workspaceId, ws.owner.token);
  const bob = h.client(ws.workspaceId, editor.token);
  h.flush();
  const thread = bob.openThread();
  alice.openThread();
  const texts = (client: typeof alice) => paths.map((path) => textOf(client, fileIdOf(client, path)));
  const aliceTexts = texts(alice);
  const bobTexts = texts(bob);
  h.flush();
  return { h, model, alice, bob, files, aliceTexts, bobTexts, view: () => readThread(thread.doc) };
}

type Ctx = ReturnType<typeof setup>;

/** A person types a few private-use characters somewhere in a file, in their own replica. */
function type(ctx: Ctx, random: Random, typed: { count: number }): void {
  const texts = random() < 0.5 ? ctx.aliceTexts : ctx.bobTexts;
  const text = texts[pick(random, texts.length)]!;
  const word = Array.from({ length: 1 + pick(random, 3) }, () => String.fromCharCode(0xe000 + typed.count++)).join('');
  text.insert(pick(random, text.length + 1), word);
}

const liveTexts = (ctx: Ctx): Record<string, string> => Object.fromEntries(paths.map((path, i) => [path, ctx.bobTexts[i]!.toString()]));

async function runTurn(ctx: Ctx, random: Random, typed: { count: number }): Promise<void> {
  const calls = 1 + pick(random, 3);
  const interrupts: Interrupt[] = ['steer', 'stop', 'fail', 'type', 'none', 'none'];
  ctx.model.answers = Array.from({ length: calls }, (_, i) => () => {
    const interrupt = interrupts[pick(random, interrupts.length)]!;
    return patchCall(random, patchFor(random, liveTexts(ctx)), interrupt, i);
  });
  const turns = ctx.view().turns.length;
  void ctx.alice.threadSend({ text: 'change things' });
  for (let round = 0; round < 2000; round++) {
    await drain();
    ctx.h.clock.advance(8);
    ctx.h.flush();
    const turn = ctx.view().turns[turns];
    if (turn && turn.status !== 'streaming') break;
    if (random() < 0.05) type(ctx, random, typed);
    const paused = ctx.model.pausedFor;
    if (paused === null) continue;
    if (paused === 'steer') void ctx.bob.threadSend({ text: 'rather this' });
    else if (paused === 'stop') void ctx.bob.threadStop();
    else {
      if (paused === 'type') type(ctx, random, typed);
      ctx.model.release();
    }
    ctx.h.flush();
  }
  ctx.model.answers = [];
  const turn = ctx.view().turns[turns];
  if (!turn || turn.status === 'streaming') throw new Error('the turn did not end');
}

async function rejectAllHolds(seed: number): Promise<void> {
  const random = seededRandom(seed);
  const ctx = setup();
  const typed = { count: 0 };
  for (let t = 0, turns = 1 + pick(random, 3); t < turns; t++) await runTurn(ctx, random, typed);
  const turnIds = ctx.view().turns.map((turn) => turn.turnId);
  // Bob rejects all, turn by turn, in any order; Alice sees the same.
  for (const turnId of turnIds.sort(() => random() - 0.5)) {
    for (const path of paths) ctx.bob.review(fileIdOf(ctx.bob, path), { turnId }, 'reject');
  }
  for (let i = 0; i < 5; i++) ctx.h.flush();
  paths.forEach((path, i) => {
    const text = ctx.bobTexts[i]!.toString();
    expect(text.replace(humanChars, ''), path).toBe(ctx.files[path]);
    expect(ctx.aliceTexts[i]!.toString(), `${path} in Alice's tab`).toBe(text);
  });
  const kept = ctx.bobTexts.map((text) => text.toString().match(humanChars)?.length ?? 0).reduce((a, b) => a + b, 0);
  expect(kept, 'every character people typed').toBe(typed.count);
  const pending = paths.flatMap((path) => [...ctx.bob.openDoc(fileIdOf(ctx.bob, path)).doc.getMap('flint.hunks').values()] as Array<{ status: string }>);
  expect(pending.filter((record) => record.status === 'pending')).toEqual([]);
  ctx.alice.destroy();
  ctx.bob.destroy();
}

describe('Reject all of the agent thread\'s turns (issue 33, invariant 4)', () => {
  it('gives back the text before them plus people\'s typing, whatever the turns did (seeded)', async () => {
    const { seed, iterations } = propertyConfig(200);
    for (let i = 0; i < iterations; i++) {
      try {
        await rejectAllHolds(seed + i);
      } catch (error) {
        throw new Error(`failed with SEED=${seed + i} (replay: SEED=${seed + i} ITERATIONS=1): ${(error as Error).message}`, { cause: error });
      }
    }
  }, 60_000 + propertyConfig(200).iterations * 1_000);
});
