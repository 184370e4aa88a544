/**
 * Review of what an agent thread turn wrote (issue 33): every hunk stays reviewable across the
 * turn's patches and steers, a hunk is not reviewed while it is written, and after a steer the
 * model is shown the half-written line it left.
 */
import { hunksOf } from '@flint/change-set';
import { readThread } from '@flint/protocol';
import { FakeClock } from '@flint/test-kit';
import { describe, expect, it } from 'vitest';
import type { ModelEvent } from '../../models/ModelProvider';
import { SqliteStore } from '../../storage/SqliteStore';
import type { ModelRouter } from '../agent/ModelRouter';
import { drain } from '../agent/ScriptedProvider';
import { fileIdOf, Harness, textOf } from '../testHarness';
import { LiveModel, type Beat } from './LiveModel';
import { taskTs } from './threadFixtures';

function setup() {
  const model = new LiveModel<'hold'>();
  const models: ModelRouter = () => ({ provider: model, model: 'spark-test', contextTokens: 128_000, supportsPrediction: false, supportsTools: true });
  const h = new Harness(new SqliteStore(':memory:'), {}, models, new FakeClock());
  const ws = h.gateway.createWorkspace('Review', { 'src/task.ts': taskTs });
  const editor = h.gateway.links.create(ws.workspaceId, 'editor', 'Editor', null);
  const alice = h.client(ws.workspaceId, ws.owner.token);
  const bob = h.client(ws.workspaceId, editor.token);
  h.flush();
  const thread = bob.openThread();
  const fileId = fileIdOf(bob, 'src/task.ts');
  const task = textOf(bob, fileId);
  h.flush();
  const view = () => readThread(thread.doc);
  /** Runs the gateway and the clients until `done` (the model may be paused). */
  const until = async (done: () => boolean, what: string) => {
    for (let i = 0; i < 500; i++) {
      if (done()) return;
      await drain();
      h.clock.advance(8);
      h.flush();
    }
    throw new Error(`never happened: ${what}`);
  };
  const turnEnded = () => view().turns.length > 0 && view().turns.every((turn) => turn.status !== 'streaming');
  const rejectAll = () => {
    for (const turn of view().turns) bob.review(fileId, { turnId: turn.turnId }, 'reject');
    h.flush();
  };
  return { h, model, alice, bob, fileId, task, view, until, turnEnded, rejectAll };
}

/** An apply_patch call, its JSON in pieces of `size`, held after the piece that ends with `holdAfter`. */
function patchCall(patch: string, options: { size?: number; holdAfter?: string } = {}): Array<Beat<'hold'>> {
  const json = JSON.stringify({ patch });
  const size = options.size ?? 7;
  const beats: Array<Beat<'hold'>> = [{ type: 'tool-call', index: 0, id: 'call_patch', name: 'apply_patch' }];
  const holdAt = options.holdAfter === undefined ? -1 : json.indexOf(options.holdAfter) + options.holdAfter.length;
  for (let at = 0; at < json.length; ) {
    const end = holdAt > at && holdAt < at + size ? holdAt : at + size;
    beats.push({ type: 'tool-call-delta', index: 0, arguments: json.slice(at, end) } satisfies ModelEvent);
    if (end === holdAt) beats.push({ pause: 'hold' });
    at = end;
  }
  return beats;
}

const addDueDate = '*** Begin Patch\n*** Update File: src/task.ts\n@@\n   title: string;\n+  dueDate?: string;\n }\n*** End Patch\n';
const renameId = '*** Begin Patch\n*** Update File: src/task.ts\n@@\n export interface Task {\n-  id: string;\n+  key: string;\n   title: string;\n*** End Patch\n';

describe('reviewing a thread turn', () => {
  it('two patches to one file in one turn: every hunk is its own, Reject all gives the file back', async () => {
    const ctx = setup();
    ctx.model.answers = [() => patchCall(addDueDate), () => patchCall(renameId)];
    void ctx.alice.threadSend({ text: 'add a dueDate, rename id' });
    await ctx.until(ctx.turnEnded, 'the turn to end');
    expect(ctx.task.toString()).toBe('export interface Task {\n  key: string;\n  title: string;\n  dueDate?: string;\n}\n');
    const records = [...hunksOf(ctx.bob.openDoc(ctx.fileId).doc).keys()];
    expect(new Set(records).size).toBe(2);
    ctx.rejectAll();
    expect(ctx.task.toString()).toBe(taskTs);
  });

  it('a steer mid-line: the model is shown the half line it left, and Reject all takes back both the half line and its fix', async () => {
    const ctx = setup();
    const fixHalfLine = '*** Begin Patch\n*** Update File: src/task.ts\n@@\n   title: string;\n-  dueD\n+  dueDate?: string;\n }\n*** End Patch\n';
    ctx.model.answers = [() => patchCall(addDueDate, { size: 3, holdAfter: '+  dueD' }), () => patchCall(fixHalfLine)];
    void ctx.alice.threadSend({ text: 'add a dueDate' });
    await ctx.until(() => ctx.model.pausedFor === 'hold' && ctx.task.toString().includes('dueD'), 'the half line to be written');
    void ctx.bob.threadSend({ text: 'make it optional' });
    await ctx.until(ctx.turnEnded, 'the turn to end');
    const continued = JSON.stringify(ctx.model.requests[1]!.messages);
    expect(continued).toContain('src/task.ts: hunk 1 was cut off in the middle of a line (line 4 ends where you stopped)');
    expect(continued).toContain('4|   dueD\\n5| }');
    expect(ctx.task.toString()).toBe('export interface Task {\n  id: string;\n  title: string;\n  dueDate?: string;\n}\n');
    ctx.rejectAll();
    expect(ctx.task.toString()).toBe(taskTs);
  });

  it('a hunk still being written cannot be accepted or rejected, through the client API either; once written it can', async () => {
    const ctx = setup();
    ctx.model.answers = [() => patchCall(addDueDate, { size: 3, holdAfter: '+  dueD' })];
    void ctx.alice.threadSend({ text: 'add a dueDate' });
    await ctx.until(() => ctx.model.pausedFor === 'hold' && ctx.task.toString().includes('dueD'), 'the hunk to be written');
    const turnId = ctx.view().turns[0]!.turnId;
    const written = ctx.task.toString();
    expect(ctx.bob.review(ctx.fileId, { turnId }, 'reject')).toBe(0);
    expect(ctx.bob.review(ctx.fileId, {}, 'accept')).toBe(0);
    ctx.h.flush();
    expect(ctx.task.toString()).toBe(written);
    expect([...hunksOf(ctx.bob.openDoc(ctx.fileId).doc).values()].map((r) => [r.status, r.writing])).toEqual([['pending', true]]);
    ctx.model.release();
    await ctx.until(ctx.turnEnded, 'the turn to end');
    expect([...hunksOf(ctx.bob.openDoc(ctx.fileId).doc).values()].map((r) => r.writing)).toEqual([undefined]);
    expect(ctx.bob.review(ctx.fileId, { turnId }, 'reject')).toBe(1);
    ctx.h.flush();
    expect(ctx.task.toString()).toBe(taskTs);
  });
});
