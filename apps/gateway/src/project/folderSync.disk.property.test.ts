/**
 * Seeded property (issue 32, item 6) on a real folder: whatever the interleaving of two browsers
 * typing at the top of a file, `sed -i`-style writes at its bottom (a temporary file renamed over
 * it) and the gateway's own queued writes, every byte typed and every byte written on disk by
 * others is in the final file, on disk and in every browser. The real watcher delivers on its own
 * time; the gateway's write must not replace a file whose change it has not taken in yet.
 */
import { FILE_TEXT_KEY } from '@flint/protocol';
import { propertyParameters } from '@flint/test-kit';
import fc from 'fast-check';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fileIdOf, textOf } from '../core/testHarness';
import { readText, RealFolders, until } from './realFolder';

type Op =
  | { kind: 'type'; who: 0 | 1; line: number }
  | { kind: 'net' }
  | { kind: 'sed'; line: number }
  | { kind: 'write' }
  | { kind: 'catch-up' };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('type' as const), who: fc.constantFrom(0 as const, 1 as const), line: fc.nat(2) }) },
  { weight: 3, arbitrary: fc.constant({ kind: 'net' as const }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('sed' as const), line: fc.nat(2) }) },
  { weight: 3, arbitrary: fc.constant({ kind: 'write' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'catch-up' as const }) },
);

// Typing happens in the first three lines and the disk edits the last three: never the same
// lines, so a line merge keeps both (where both change one line, the document wins: 0023).
const lineCount = 10;
const initial = Array.from({ length: lineCount }, (_, i) => `line ${i}\n`).join('');

const folders = new RealFolders();
afterEach(() => folders.cleanup());

async function run(ops: Op[]): Promise<void> {
  const root = folders.folder({ 'f.txt': initial });
  const ctx = await folders.open(root, { writeDelayMs: 0 });
  const bob = ctx.h.client(ctx.workspaceId, ctx.token);
  ctx.h.flush();
  const fileId = fileIdOf(ctx.alice, 'f.txt');
  const texts = [textOf(ctx.alice, fileId), textOf(bob, fileId)];
  ctx.h.flush();
  const gateway = () => ctx.room.doc(fileId)!.doc.getText(FILE_TEXT_KEY).toString();
  const tokens: string[] = [];
  let seds = 0;
  for (const step of ops) {
    switch (step.kind) {
      case 'type': {
        const text = texts[step.who]!;
        const token = `<${step.who}:${tokens.length}>`;
        const lines = text.toString().split('\n');
        const at = lines.slice(0, step.line).reduce((sum, line) => sum + line.length + 1, 0);
        text.insert(at, token);
        tokens.push(token);
        break;
      }
      case 'net':
        ctx.h.flush();
        break;
      case 'sed': {
        // sed -i '$ s/$/ Mk/' on one of the last lines: a temporary file beside it, renamed over it.
        const current = readText(root, 'f.txt')!;
        const lines = current.split('\n');
        const index = lines.length - 2 - step.line;
        const token = `[disk ${seds}]`;
        lines[index] += ` ${token}`;
        const temp = join(root, `sed${String(seds++).padStart(6, '0')}`);
        writeFileSync(temp, lines.join('\n'));
        renameSync(temp, join(root, 'f.txt'));
        tokens.push(token);
        break;
      }
      case 'write':
        ctx.h.flush();
        await ctx.sync.flushed();
        break;
      case 'catch-up':
        await until(ctx.h, () => readText(root, 'f.txt') === gateway(), 'the disk and the gateway to agree');
        break;
    }
  }
  // Quiet: the watcher has delivered, writes are done, both browsers have the gateway's text.
  await until(
    ctx.h,
    () => {
      void ctx.sync.flushed();
      const text = gateway();
      return readText(root, 'f.txt') === text && texts.every((t) => t.toString() === text);
    },
    'disk, gateway and browsers to agree',
  );
  const final = readText(root, 'f.txt')!;
  for (const token of tokens) expect(final, `${token} is lost`).toContain(token);
}

describe('a folder project on disk while people type and something else writes the file', () => {
  it('keeps every byte typed and every byte written on disk by others (seeded)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 5, maxLength: 30 }), async (ops) => {
        try {
          await run(ops);
        } finally {
          await folders.cleanup();
        }
      }),
      propertyParameters(150),
    );
  }, 600_000);
});
