/**
 * Review of what an agent thread turn wrote (issue 33): every hunk stays reviewable across the
 * turn's patches and steers, a hunk is not reviewed while it is written, and after a steer the
 * model is shown the half-written line it left.
 */
import { hunksOf } from '@flint/change-set';
import { CloseCode, encodeControl, FILE_TEXT_KEY, INDEX_ENTRIES_KEY, readThread, type IndexEntry } from '@flint/protocol';
import { FakeClock, until as waitUntil } from '@flint/test-kit';
import { describe, expect, it } from 'vitest';
import type { ModelEvent } from '../ports/ModelProvider';
import { SqliteStore } from '../../storage/SqliteStore';
import type { ModelRouter } from '../agent/ModelRouter';
import { drain } from '../../../test/ScriptedProvider';
import { fileIdOf, Harness, hello, textOf } from '../../../test/testHarness';
import { LiveModel, type Beat } from './LiveModel';
import { taskTs } from './threadFixtures';

function setup(files: Record<string, string> = { 'src/task.ts': taskTs }) {
  const model = new LiveModel<'hold'>();
  const models: ModelRouter = () => ({ provider: model, model: 'spark-test', contextTokens: 128_000, supportsPrediction: false, supportsTools: true });
  const h = new Harness(new SqliteStore(':memory:'), {}, models, new FakeClock());
  const ws = h.gateway.createWorkspace('Review', files);
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
  const until = (done: () => boolean, what: string) => waitUntil(done, what, { wait: async () => (await drain(), h.clock.advance(8), h.flush()) });
  const turnEnded = () => view().turns.length > 0 && view().turns.every((turn) => turn.status !== 'streaming');
  const rejectAll = () => {
    for (const turn of view().turns) bob.review(fileId, { turnId: turn.turnId }, 'reject');
    h.flush();
  };
  /** The tree as Alice's tab sees it: path → the file's text. */
  const tree = async () => {
    const out: Record<string, string> = {};
    for (const [path, entry] of alice.index.doc.getMap<IndexEntry>(INDEX_ENTRIES_KEY)) {
      if (entry.kind !== 'file') continue;
      const handle = alice.openDoc(entry.fileId);
      await until(() => handle.synced, `${path} to sync`);
      out[path] = handle.doc.getText(FILE_TEXT_KEY).toString();
    }
    return out;
  };
  /** Waits for a request's answer, running the gateway meanwhile. */
  const answer = async <T,>(request: Promise<T>): Promise<T> => {
    let settled = false;
    void request.then(() => (settled = true));
    await until(() => settled, 'the answer');
    return request;
  };
  return { h, workspaceId: ws.workspaceId, model, alice, bob, fileId, task, view, until, turnEnded, rejectAll, tree, answer };
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

  it('a turn\'s created, renamed and deleted files are rejected with it: the tree and every text come back, and each reject can be undone', async () => {
    const files = { 'src/task.ts': taskTs, 'src/old.ts': 'export const old = 1;\n', 'src/util.ts': 'export const util = 2;\n' };
    const ctx = setup(files);
    const patch = [
      '*** Begin Patch',
      '*** Add File: src/dueDate.ts',
      '+export const dueDate = (days: number) => days;',
      '*** Update File: src/task.ts',
      '*** Move to: src/model/task.ts',
      '@@',
      '   title: string;',
      '+  dueDate?: string;',
      ' }',
      '*** Delete File: src/old.ts',
      '*** End Patch',
      '',
    ].join('\n');
    ctx.model.answers = [() => patchCall(patch), () => [{ type: 'tool-call', index: 0, id: 'call_rm', name: 'delete_file' }, { type: 'tool-call-delta', index: 0, arguments: JSON.stringify({ path: 'src/util.ts' }) }]];
    void ctx.alice.threadSend({ text: 'add a due date module, move task, drop old and util' });
    await ctx.until(ctx.turnEnded, 'the turn to end');
    expect(Object.keys(await ctx.tree()).sort()).toEqual(['src/dueDate.ts', 'src/model/task.ts']);
    const turnId = ctx.view().turns[0]!.turnId;
    expect(ctx.view().fileOps.map((op) => [op.kind, op.path])).toEqual([
      ['create', 'src/dueDate.ts'],
      ['rename', 'src/task.ts'],
      ['delete', 'src/old.ts'],
      ['delete', 'src/util.ts'],
    ]);
    // Bob rejects all: the file operations (on the gateway), then the hunks (in his tab).
    expect(await ctx.answer(ctx.bob.threadReview(turnId, 'reject'))).toEqual({ ok: true, turnId });
    ctx.rejectAll();
    expect(await ctx.tree()).toEqual(files);
    expect(ctx.view().fileOps.map((op) => op.status)).toEqual(['rejected', 'rejected', 'rejected', 'rejected']);
    // One step back: the deleted util.ts is deleted again; then its rejection again restores it.
    const util = ctx.view().fileOps[3]!.opId;
    expect((await ctx.answer(ctx.bob.threadReview(turnId, 'undo', util))).ok).toBe(true);
    expect(Object.keys(await ctx.tree()).sort()).toEqual(['src/old.ts', 'src/task.ts']);
    expect((await ctx.answer(ctx.bob.threadReview(turnId, 'reject', util))).ok).toBe(true);
    expect(await ctx.tree()).toEqual(files);
  });

  it('a file operation is not reviewed while its turn runs, nor reversed onto a path taken since', async () => {
    const ctx = setup();
    const add = '*** Begin Patch\n*** Add File: src/new.ts\n+export const x = 1;\n*** End Patch\n';
    ctx.model.answers = [() => [...patchCall(add), { pause: 'hold' }]];
    void ctx.alice.threadSend({ text: 'add new.ts' });
    await ctx.until(() => ctx.model.pausedFor === 'hold', 'the patch to be applied');
    const turnId = ctx.view().turns[0]!.turnId;
    expect(await ctx.answer(ctx.bob.threadReview(turnId, 'reject'))).toMatchObject({ ok: false, code: 'busy' });
    ctx.model.release();
    await ctx.until(ctx.turnEnded, 'the turn to end');
    expect((await ctx.answer(ctx.bob.threadReview(turnId, 'reject'))).ok).toBe(true);
    expect(Object.keys(await ctx.tree())).toEqual(['src/task.ts']);
    // Someone creates src/new.ts again; the create's rejection cannot be undone onto it.
    expect((await ctx.answer(ctx.bob.request({ type: 'file.create', path: 'src/new.ts', kind: 'file' }))).ok).toBe(true);
    const opId = ctx.view().fileOps[0]!.opId;
    expect(await ctx.answer(ctx.bob.threadReview(turnId, 'undo', opId))).toMatchObject({ ok: false, code: 'exists' });
  });

  it('a gateway that stopped mid-hunk leaves nothing unreviewable: after the restart the hunk can be rejected', async () => {
    const ctx = setup();
    ctx.model.answers = [() => patchCall(addDueDate, { size: 3, holdAfter: '+  dueD' })];
    void ctx.alice.threadSend({ text: 'add a dueDate' });
    await ctx.until(() => ctx.model.pausedFor === 'hold' && ctx.task.toString().includes('dueD'), 'the hunk to be written');
    const turnId = ctx.view().turns[0]!.turnId;
    ctx.h.restart();
    await ctx.until(() => ctx.view().turns[0]!.status === 'failed', 'the turn to be closed after the restart');
    await ctx.until(() => [...hunksOf(ctx.bob.openDoc(ctx.fileId).doc).values()].every((record) => !record.writing), 'the hunk to be reviewable');
    expect(ctx.bob.review(ctx.fileId, { turnId }, 'reject')).toBe(1);
    ctx.h.flush();
    expect(ctx.task.toString()).toBe(taskTs);
  });

  it('[P35] a viewer cannot review file operations: the gateway closes a socket that tries', async () => {
    const ctx = setup();
    const viewer = ctx.h.gateway.links.create(ctx.workspaceId, 'viewer', 'Viewer', null);
    const raw = ctx.h.openRaw();
    hello(raw, ctx.workspaceId, viewer.token);
    ctx.h.flush();
    raw.client.send(encodeControl({ type: 'thread.review', requestId: 1, turnId: 't1', action: 'reject' }));
    ctx.h.flush();
    expect(raw.closeCode).toBe(CloseCode.Forbidden);
  });
});
