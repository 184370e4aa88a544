/**
 * The world of the Reject-all property (issue 33, invariant 4): a workspace of two files, two
 * people typing private-use characters, patches written against the files as they are, and the
 * check that Reject all of the turns gives back the tree and the texts plus the people's typing.
 * Test support for rejectAll.property.test.ts and rejectAll.providers.test.ts.
 */
import { FILE_TEXT_KEY, INDEX_ENTRIES_KEY, readThread, type IndexEntry } from '@flint/protocol';
import { FakeClock } from '@flint/test-kit';
import { expect } from 'vitest';
import type * as Y from 'yjs';
import { SqliteStore } from '../src/storage/SqliteStore';
import type { ModelRouter } from '../src/core/agent/ModelRouter';
import { fileIdOf, Harness, textOf } from './testHarness';

/** People type private-use characters: the agent never writes them, so they can be counted. */
export const humanChars = /[\ue000-\uf8ff]/g;
export const paths = ['src/a.ts', 'src/b.ts'];

export type Random = () => number;
export const pick = (random: Random, n: number) => Math.floor(random() * n);

/** The workspace, Alice and Bob (editors, each a tab with both files open), and their thread. */
export function createWorld(models: ModelRouter, clock = new FakeClock()) {
  const h = new Harness(new SqliteStore(':memory:'), {}, models, clock);
  const files: Record<string, string> = {};
  for (const path of paths) files[path] = Array.from({ length: 12 }, (_, i) => `const ${path[4]}${i} = ${i};`).join('\n') + '\n';
  const ws = h.gateway.createWorkspace('Review', files);
  const editor = h.gateway.links.create(ws.workspaceId, 'editor', 'Editor', null);
  const alice = h.client(ws.workspaceId, ws.owner.token);
  const bob = h.client(ws.workspaceId, editor.token);
  h.flush();
  const thread = bob.openThread();
  alice.openThread();
  const fileIds = paths.map((path) => fileIdOf(bob, path));
  const aliceTexts = fileIds.map((fileId) => textOf(alice, fileId));
  const bobTexts = fileIds.map((fileId) => textOf(bob, fileId));
  h.flush();
  /** Another editor's fresh tab, as someone reviewing later opens one. */
  const tab = () => h.client(ws.workspaceId, editor.token);
  /** Files a patch the model is writing deletes. */
  const deleting = new Set<string>();
  return { h, alice, bob, tab, files, fileIds, deleting, aliceTexts, bobTexts, view: () => readThread(thread.doc) };
}

export type World = ReturnType<typeof createWorld>;

/** Where a file is in the tree now (as Bob's tab sees it), or null once it is deleted. */
export function pathOf(ctx: World, fileId: string): string | null {
  for (const [path, entry] of ctx.bob.index.doc.getMap<IndexEntry>(INDEX_ENTRIES_KEY)) if (entry.kind === 'file' && entry.fileId === fileId) return path;
  return null;
}

/**
 * A patch written against the files as they are now: hunks in the original files (wherever they
 * were moved), now and then a new file, a move or a deletion.
 */
export function patchFor(random: Random, ctx: World): string {
  const out = ['*** Begin Patch'];
  if (random() < 0.15) {
    out.push(`*** Add File: src/new${pick(random, 1e6)}.ts`);
    for (let i = 0, n = 1 + pick(random, 3); i < n; i++) out.push(`+export const x${i} = ${pick(random, 100)};`);
  }
  ctx.fileIds.forEach((fileId, f) => {
    const path = pathOf(ctx, fileId);
    if (path === null || random() < 0.4) return;
    if (random() < 0.08) {
      ctx.deleting.add(fileId);
      return void out.push(`*** Delete File: ${path}`);
    }
    const lines = ctx.bobTexts[f]!.toString().split('\n').slice(0, -1);
    out.push(`*** Update File: ${path}`);
    if (random() < 0.1) out.push(`*** Move to: src/moved${pick(random, 4)}.ts`);
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
  });
  out.push('*** End Patch');
  return `${out.join('\n')}\n`;
}

/** A person types a few private-use characters somewhere in a file still in the tree, in their own replica. */
export function humanTypes(ctx: World, random: Random, typed: { count: number }): void {
  // Not into a file the model is deleting: a keystroke the gateway gets after the delete has no
  // doc to go to (the tab learns it with the tree); that race is not the agent's to reverse.
  const texts = (random() < 0.5 ? ctx.aliceTexts : ctx.bobTexts).filter((_, f) => !ctx.deleting.has(ctx.fileIds[f]!) && pathOf(ctx, ctx.fileIds[f]!) !== null);
  if (texts.length === 0) return;
  const text = texts[pick(random, texts.length)]!;
  const word = Array.from({ length: 1 + pick(random, 3) }, () => String.fromCharCode(0xe000 + typed.count++)).join('');
  text.insert(pick(random, text.length + 1), word);
  // At the gateway before the model's next move: one that deletes the file would leave the
  // keystroke no doc to land in.
  ctx.h.flush();
}

/** Runs the gateway until the request is answered. */
async function answered<T>(pump: () => Promise<void>, request: Promise<T>): Promise<T> {
  let settled = false;
  void request.then(() => (settled = true));
  for (let i = 0; i < 200 && !settled; i++) {
    await pump();
  }
  return request;
}

/** Opens every file of the tree in `client`: path → its synced text. */
async function treeOf(client: ReturnType<World['tab']>, pump: () => Promise<void>): Promise<Map<string, { fileId: string; text: Y.Text }>> {
  const tree = new Map<string, { fileId: string; text: Y.Text }>();
  for (const [path, entry] of client.index.doc.getMap<IndexEntry>(INDEX_ENTRIES_KEY)) {
    if (entry.kind !== 'file') continue;
    const handle = client.openDoc(entry.fileId);
    for (let i = 0; i < 200 && !handle.synced; i++) await pump();
    if (!handle.synced) throw new Error(`${path} did not sync`);
    tree.set(path, { fileId: entry.fileId, text: handle.doc.getText(FILE_TEXT_KEY) });
  }
  return tree;
}

/**
 * Carol, in a tab opened now, rejects all of the world's turns: their file operations, newest turn
 * first (a later turn may have moved what an earlier one created), then their hunks, in any
 * order. The tree and the texts must be those before the turns plus what people typed.
 * `pump` runs the gateway a step (and whatever I/O the test has).
 */
export async function rejectAllAndCheck(ctx: World, random: Random, typed: { count: number }, pump: () => Promise<void>): Promise<void> {
  const turnIds = ctx.view().turns.map((turn) => turn.turnId);
  const carol = ctx.tab();
  ctx.h.flush();
  for (const turnId of [...turnIds].reverse()) {
    const result = await answered(pump, carol.threadReview(turnId, 'reject'));
    expect(result, `the file operations of ${turnId}`).toMatchObject({ ok: true });
  }
  const tree = await treeOf(carol, pump);
  for (const turnId of [...turnIds].sort(() => random() - 0.5)) {
    for (const { fileId } of tree.values()) carol.review(fileId, { turnId }, 'reject');
  }
  for (let i = 0; i < 5; i++) ctx.h.flush();
  expect([...tree.keys()].sort(), 'the tree').toEqual(paths);
  for (const path of paths) expect(tree.get(path)!.text.toString().replace(humanChars, ''), path).toBe(ctx.files[path]);
  const kept = paths.map((path) => tree.get(path)!.text.toString().match(humanChars)?.length ?? 0).reduce((a, b) => a + b, 0);
  expect(kept, 'every character people typed').toBe(typed.count);
  // A second tab opened afterwards reads the same (what reached the gateway, not only Carol).
  const dave = ctx.tab();
  ctx.h.flush();
  const again = await treeOf(dave, pump);
  for (const path of paths) expect(again.get(path)!.text.toString(), `${path} in a later tab`).toBe(tree.get(path)!.text.toString());
  for (const client of [ctx.alice, ctx.bob, carol, dave]) client.destroy();
}
