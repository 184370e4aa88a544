/**
 * Seeded property (issue 32, items 6 and 8) on a real folder: whatever the interleaving of two
 * browsers typing at the top of a file, `sed -i`-style writes at its bottom (a temporary file
 * renamed over it), the file moved (`mv`) or deleted and written again (a checkout), and the
 * gateway's own queued writes, every byte typed and every byte written on disk by others is in
 * the final file, on disk and in every browser, and the file kept its document. The real watcher
 * delivers on its own time; the gateway's write must not replace a file whose change it has not
 * taken in yet.
 */
import { FILE_TEXT_KEY } from '@flint/protocol';
import { propertyParameters } from '@flint/test-kit';
import fc from 'fast-check';
import { readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fileIdOf, textOf } from '../../test/testHarness';
import { readText, RealFolders, until } from '../../test/realFolder';

type Op =
  | { kind: 'type'; who: 0 | 1; line: number }
  | { kind: 'net' }
  | { kind: 'sed'; line: number }
  | { kind: 'write' }
  | { kind: 'move' }
  | { kind: 'recreate'; line: number }
  | { kind: 'catch-up' };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('type' as const), who: fc.constantFrom(0 as const, 1 as const), line: fc.nat(2) }) },
  { weight: 3, arbitrary: fc.constant({ kind: 'net' as const }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('sed' as const), line: fc.nat(2) }) },
  { weight: 3, arbitrary: fc.constant({ kind: 'write' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'catch-up' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'move' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('recreate' as const), line: fc.nat(2) }) },
);

// Typing happens in the first three lines and the disk edits the last three: never the same
// lines, so a line merge keeps both (where both change one line, the document wins: 0023).
const lineCount = 10;
const initial = Array.from({ length: lineCount }, (_, i) => `line ${i}\n`).join('');

const folders = new RealFolders();
afterEach(() => folders.cleanup());

async function run(ops: Op[]): Promise<void> {
  const root = folders.folder({ 'f.txt': initial });
  // A long window: a loaded machine must not split a move's delete and create past it.
  const ctx = await folders.open(root, { writeDelayMs: 0, renameWindowMs: 1_000 });
  const bob = ctx.h.client(ctx.workspaceId, ctx.token);
  ctx.h.flush();
  const fileId = fileIdOf(ctx.alice, 'f.txt');
  const texts = [textOf(ctx.alice, fileId), textOf(bob, fileId)];
  ctx.h.flush();
  const gateway = () => ctx.room.doc(fileId)?.doc.getText(FILE_TEXT_KEY).toString() ?? null;
  const tokens: string[] = [];
  let seds = 0;
  let current = 'f.txt';
  /** The file with `token` added to one of its last lines, as the disk has it now. */
  const withToken = (line: number, token: string) => {
    const lines = readText(root, current)!.split('\n');
    lines[lines.length - 2 - line] += ` ${token}`;
    return lines.join('\n');
  };
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
        const token = `[disk ${seds}]`;
        const temp = join(root, `sed${String(seds++).padStart(6, '0')}`);
        writeFileSync(temp, withToken(step.line, token));
        renameSync(temp, join(root, current));
        tokens.push(token);
        break;
      }
      case 'move': {
        const to = `moved-${seds++}.txt`;
        renameSync(join(root, current), join(root, to));
        current = to;
        break;
      }
      case 'recreate': {
        // A checkout: the file deleted, then written with other text (whole, so no read sees half).
        const token = `[checkout ${seds}]`;
        const text = withToken(step.line, token);
        const temp = join(root, `.git-checkout-${seds++}`);
        rmSync(join(root, current));
        writeFileSync(temp, text);
        renameSync(temp, join(root, current));
        tokens.push(token);
        break;
      }
      case 'write':
        ctx.h.flush();
        await ctx.sync.flushed();
        break;
      case 'catch-up':
        await until(ctx.h, () => readText(root, current) === gateway(), 'the disk and the gateway to agree');
        break;
    }
  }
  // Quiet: the watcher has delivered, writes are done, both browsers have the gateway's text.
  await until(
    ctx.h,
    () => {
      void ctx.sync.flushed();
      const text = gateway();
      return ctx.room.pathOf(fileId) === current && readText(root, current) === text && texts.every((t) => t.toString() === text);
    },
    'disk, gateway and browsers to agree, the document at the file’s path',
  ).catch((error: unknown) => {
    // What each side holds, so a failing seed says where the file or its bytes went.
    const state = { path: current, gatewayPath: ctx.room.pathOf(fileId), tree: [...ctx.room.entries.keys()], disk: readdirSync(root), onDisk: readText(root, current), gateway: gateway(), browsers: texts.map(String) };
    throw new Error(`${String(error)}\n${JSON.stringify(state, null, 1)}`);
  });
  const final = readText(root, current)!;
  for (const token of tokens) expect(final, `${token} is lost`).toContain(token);
}

// SEED and ITERATIONS (or PROPERTY_RUNS) replay a run; a failure prints its seed and path.
const parameters = propertyParameters(Number(process.env.ITERATIONS) || 150);

describe('a folder project on disk while people type and something else writes the file', () => {
  it(`keeps every byte typed and every byte written on disk by others (SEED=${parameters.seed}, ${parameters.numRuns} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 5, maxLength: 30 }), async (ops) => {
        try {
          await run(ops);
        } finally {
          await folders.cleanup();
        }
      }),
      parameters,
    );
  }, 600_000);
});
