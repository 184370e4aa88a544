/** A turn whose file is deleted or renamed while the model streams into it ([P19], [P20], [P23]). */
import { viewHunks } from '@flint/change-set';
import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../../storage/SqliteStore';
import { fileIdOf, Harness, textOf } from '../../../test/testHarness';
import type { ModelRouter } from './ModelRouter';
import { drain, ScriptedProvider } from '../../../test/ScriptedProvider';

const original = 'export function add(a: number, b: number) {\n  return a + b;\n}\n';

async function streamingTurn() {
  const provider = new ScriptedProvider();
  const models: ModelRouter = () => ({ provider, model: 'spark-test', contextTokens: 32_000, supportsPrediction: false });
  const store = new SqliteStore(':memory:');
  const h = new Harness(store, {}, models);
  const ws = h.gateway.createWorkspace('Moves', { 'src/math.ts': original, 'src/other.ts': 'x\n' });
  const alice = h.client(ws.workspaceId, ws.owner.token);
  const bob = h.client(ws.workspaceId, ws.owner.token);
  h.flush();
  const fileId = fileIdOf(alice, 'src/math.ts');
  const text = textOf(bob, fileId);
  h.flush();
  textOf(alice, fileId);
  h.flush();
  const prompted = alice.prompt({ fileId, anchor: 0, head: original.length, instruction: 'document it' });
  h.flush();
  await drain(); // the answer is sent once the prompt is admitted
  h.flush();
  const answer = await prompted;
  if (!answer.ok || !answer.turnId) throw new Error(`prompt refused: ${JSON.stringify(answer)}`);
  const turnId = answer.turnId;
  /** Lets the turn take what the provider sent, then runs one flush interval. */
  const step = async () => {
    await drain();
    h.clock.advance(8);
    h.flush();
  };
  // The comment is applied once the model's text has moved past it into the original.
  provider.emit('/** Adds. */\nexport function add(a: number, b: number) {\n');
  await step();
  expect(text.toString()).toContain('/** Adds. */');
  const fileOp = async (op: Parameters<typeof alice.request>[0]) => {
    const result = alice.request(op);
    h.flush();
    return result;
  };
  return { h, store, ws, provider, alice, bob, fileId, text, turnId, step, fileOp };
}

describe('a turn whose file moves', () => {
  it('[P19] deleting the file stops its turn at once: cancelled for everyone, provider aborted, nothing stored after', async () => {
    const ctx = await streamingTurn();
    await expect(ctx.fileOp({ type: 'file.delete', path: 'src/math.ts' })).resolves.toEqual({ ok: true });
    expect(ctx.provider.aborted).toBe(1);
    expect(ctx.bob.turns.get(ctx.turnId)).toMatchObject({ status: 'cancelled', fileId: ctx.fileId, error: null });
    expect(ctx.alice.turns.get(ctx.turnId)?.status).toBe('cancelled');
    ctx.provider.emit('  return a + b; // SHOULD NOT APPEAR\n}\n');
    ctx.provider.end();
    await ctx.step();
    await ctx.step();
    // Nothing was written back into the deleted document: it stays gone.
    expect(ctx.store.loadDoc(`${ctx.ws.workspaceId}/${ctx.fileId}`).updates).toEqual([]);
    expect(ctx.h.gateway.metrics.counter('flint_agent_turns_total', { status: 'cancelled', route: 'fast' })).toBe(1);
    // The turn is over: stopping it again says so.
    const cancel = ctx.alice.cancelTurn(ctx.turnId);
    ctx.h.flush();
    await expect(cancel).resolves.toMatchObject({ ok: false, code: 'not_found' });
  });

  it('[P19] deleting the folder the file is in stops its turn too; deleting another file does not', async () => {
    const ctx = await streamingTurn();
    await expect(ctx.fileOp({ type: 'file.delete', path: 'src/other.ts' })).resolves.toEqual({ ok: true });
    expect(ctx.bob.turns.get(ctx.turnId)?.status).toBe('streaming');
    expect(ctx.provider.aborted).toBe(0);
    await expect(ctx.fileOp({ type: 'file.delete', path: 'src' })).resolves.toEqual({ ok: true });
    expect(ctx.bob.turns.get(ctx.turnId)?.status).toBe('cancelled');
    expect(ctx.provider.aborted).toBe(1);
  });

  it('[P19] renaming the file (or its folder) mid-turn changes nothing for the turn: it streams on and ends done', async () => {
    const ctx = await streamingTurn();
    await expect(ctx.fileOp({ type: 'file.rename', from: 'src/math.ts', to: 'src/add.ts' })).resolves.toEqual({ ok: true });
    ctx.provider.emit('  return a + b;\n');
    await ctx.step();
    await expect(ctx.fileOp({ type: 'file.rename', from: 'src', to: 'lib' })).resolves.toEqual({ ok: true });
    ctx.provider.emit('}\n');
    ctx.provider.end();
    await ctx.step();
    await ctx.step();
    expect(ctx.provider.aborted).toBe(0);
    expect(fileIdOf(ctx.bob, 'lib/add.ts')).toBe(ctx.fileId);
    expect(ctx.bob.turns.get(ctx.turnId)).toMatchObject({ status: 'done', fileId: ctx.fileId, error: null });
    expect(ctx.text.toString()).toBe(`/** Adds. */\n${original}`);
    expect(viewHunks(ctx.bob.openDoc(ctx.fileId).doc, ctx.text).map((hunk) => hunk.record.turnId)).toEqual([ctx.turnId]);
  });
});
