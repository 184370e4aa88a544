/**
 * Issue 33, DESIGN §11 invariant 4: whatever the agent thread did — several patches to a file in
 * one turn, steers, stops, provider failures, files created, moved and deleted, in one or
 * several turns, with people typing — rejecting all of those turns gives back exactly the tree
 * and the text before them plus what people typed.
 * Seeded: `SEED` / `ITERATIONS` (a failure prints its seed; replay it with ITERATIONS=1).
 */
import { propertyConfig, seededRandom } from '@flint/test-kit';
import { describe, it } from 'vitest';
import { ProviderError } from '../ports/ModelProvider';
import { drain } from '../../../test/ScriptedProvider';
import { LiveModel, type Beat } from './LiveModel';
import { createWorld, humanTypes, patchFor, pick, rejectAllAndCheck, type Random, type World } from '../../../test/rejectAllWorld';

type Interrupt = 'steer' | 'stop' | 'fail' | 'type' | 'none';

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

async function runTurn(ctx: World & { model: LiveModel<Interrupt> }, random: Random, typed: { count: number }): Promise<void> {
  const calls = 1 + pick(random, 3);
  const interrupts: Interrupt[] = ['steer', 'stop', 'fail', 'type', 'none', 'none'];
  ctx.model.answers = Array.from({ length: calls }, (_, i) => () => {
    const interrupt = interrupts[pick(random, interrupts.length)]!;
    return patchCall(random, patchFor(random, ctx), interrupt, i);
  });
  const turns = ctx.view().turns.length;
  void ctx.alice.threadSend({ text: 'change things' });
  for (let round = 0; round < 2000; round++) {
    await drain();
    ctx.h.clock.advance(8);
    ctx.h.flush();
    const turn = ctx.view().turns[turns];
    if (turn && turn.status !== 'streaming') break;
    if (random() < 0.05) humanTypes(ctx, random, typed);
    const paused = ctx.model.pausedFor;
    if (paused === null) continue;
    if (paused === 'steer') void ctx.bob.threadSend({ text: 'rather this' });
    else if (paused === 'stop') void ctx.bob.threadStop();
    else {
      if (paused === 'type') humanTypes(ctx, random, typed);
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
  const model = new LiveModel<Interrupt>();
  const ctx = { ...createWorld(() => ({ provider: model, model: 'spark-test', contextTokens: 128_000, supportsPrediction: false, supportsTools: true })), model };
  const typed = { count: 0 };
  for (let t = 0, turns = 1 + pick(random, 3); t < turns; t++) await runTurn(ctx, random, typed);
  await rejectAllAndCheck(ctx, random, typed, async () => {
    await drain();
    ctx.h.flush();
  });
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
