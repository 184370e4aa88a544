import { hunksOf } from '@flint/change-set';
import { applyPatchToText, collectFileChanges, PatchReader } from '@flint/patch-reader';
import { FILE_TEXT_KEY } from '@flint/protocol';
import { propertyParameters } from '@flint/test-kit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { AgentPeer } from '../agent/AgentPeer';
import { PatchStream, type PatchTarget } from './PatchStream';

/** Files as Y.Docs by path, with the agent's peer in each: what a room gives a patch. */
function workspace(files: Record<string, string>) {
  const docs = new Map<string, Y.Doc>();
  const paths = new Map<string, string>();
  const peers = new Map<Y.Doc, AgentPeer>();
  let next = 0;
  const add = (path: string, text: string) => {
    const fileId = `f${next++}`;
    const doc = new Y.Doc();
    doc.getText(FILE_TEXT_KEY).insert(0, text);
    docs.set(fileId, doc);
    paths.set(path, fileId);
    return fileId;
  };
  for (const [path, text] of Object.entries(files)) add(path, text);
  const target: PatchTarget = {
    fileIdAt: (path) => paths.get(path) ?? null,
    docOf: (fileId) => docs.get(fileId) ?? null,
    peerOf: (doc) => {
      let peer = peers.get(doc);
      if (!peer) peers.set(doc, (peer = new AgentPeer(doc, 999_999)));
      return peer;
    },
    createFile: (path) => (paths.has(path) ? { ok: false, message: 'exists' } : { ok: true, fileId: add(path, '') }),
    deleteFile: (path) => (paths.delete(path) ? { ok: true } : { ok: false, message: 'missing' }),
    moveFile: (from, to) => {
      const id = paths.get(from);
      if (!id) return { ok: false, message: 'missing' };
      paths.delete(from);
      paths.set(to, id);
      return { ok: true };
    },
    lastRead: () => undefined,
  };
  const text = (path: string) => {
    const id = paths.get(path);
    return id === undefined ? null : docs.get(id)!.getText(FILE_TEXT_KEY).toString();
  };
  return { target, text, docs, paths };
}

function changesOf(patch: string) {
  const reader = new PatchReader();
  return collectFileChanges([...reader.push(patch), ...reader.finish()]);
}

function applied(text: string, change: ReturnType<typeof changesOf>[number]): string {
  const result = applyPatchToText(text, change);
  if (!result.ok || result.text === null) throw new Error('the reference could not apply the patch');
  return result.text;
}

const quiet = { changed: () => {}, wrote: () => {} };

function stream(patch: string, files: Record<string, string>, chunks: string[] = [patch]) {
  const ws = workspace(files);
  const patchStream = new PatchStream('t1', ws.target, quiet);
  for (const chunk of chunks) patchStream.push(chunk);
  patchStream.finish();
  return { ...ws, patchStream };
}

const taskTs = 'export interface Task {\n  id: string;\n  title: string;\n}\n\nexport function formatTask(task: Task): string {\n  return task.title;\n}\n';
const twoFiles = `*** Begin Patch
*** Update File: src/task.ts
@@ export interface Task {
   id: string;
   title: string;
+  dueDate?: string;
 }
@@
 export function formatTask(task: Task): string {
-  return task.title;
+  return task.dueDate ? \`\${task.title} (due \${task.dueDate})\` : task.title;
 }
*** Add File: src/due.ts
+export const isDue = (date: string) => date < new Date().toISOString();
*** End Patch
`;

describe('PatchStream', () => {
  it('streams a two-file patch into the live documents, as hunks of the turn', () => {
    const { text, patchStream, docs } = stream(twoFiles, { 'src/task.ts': taskTs });
    expect(text('src/task.ts')).toBe(applied(taskTs, changesOf(twoFiles)[0]!));
    expect(text('src/due.ts')).toBe('export const isDue = (date: string) => date < new Date().toISOString();\n');
    expect(patchStream.failures).toEqual([]);
    expect(patchStream.ended).toBe(true);
    const changes = [...patchStream.changes.values()];
    expect(changes.map((c) => [c.path, c.added, c.removed, c.line, !!c.created])).toEqual([
      ['src/task.ts', 2, 1, 4, false],
      ['src/due.ts', 1, 0, 1, true],
    ]);
    // Every change is a pending hunk of the turn, with its own id.
    const hunks = [...hunksOf(docs.get('f0')!).entries()];
    expect(hunks.length).toBeGreaterThanOrEqual(2);
    expect(new Set(hunks.map(([id]) => id)).size).toBe(hunks.length);
    expect(hunks.every(([, h]) => h.turnId === 't1' && h.status === 'pending')).toBe(true);
  });

  it('writes an added line while it streams, once its old lines are placed', () => {
    const ws = workspace({ 'a.ts': 'one\ntwo\nthree\n' });
    const shown: string[] = [];
    const patchStream: PatchStream = new PatchStream('t1', ws.target, { changed: () => {}, wrote: () => shown.push(patchStream.provisional) });
    patchStream.push('*** Begin Patch\n*** Update File: a.ts\n@@\n one\n-two\n+TW');
    // Not certain yet (it may still keep "two"): provisional, shown after the agent's cursor.
    expect(patchStream.provisional).toBe('TW');
    expect(shown.at(-1)).toBe('TW');
    patchStream.push('O\n three\n*** End Patch\n');
    patchStream.finish();
    expect(ws.text('a.ts')).toBe('one\nTWO\nthree\n');
  });

  it('keeps what people typed meanwhile, before and inside the hunk', () => {
    const ws = workspace({ 'a.ts': 'alpha\nbeta\ngamma\n' });
    const patchStream = new PatchStream('t1', ws.target, quiet);
    patchStream.push('*** Begin Patch\n*** Update File: a.ts\n@@\n alpha\n-beta\n+BETA\n');
    ws.docs.get('f0')!.getText(FILE_TEXT_KEY).insert(0, '// typed\n');
    patchStream.push(' gamma\n+delta\n*** End Patch\n');
    patchStream.finish();
    expect(ws.text('a.ts')).toBe('// typed\nalpha\nBETA\ngamma\ndelta\n');
  });

  it('applies nothing for a hunk whose context is not in the file, and says why', () => {
    const files = { 'a.ts': 'one\ntwo\n' };
    const { text, patchStream } = stream('*** Begin Patch\n*** Update File: a.ts\n@@\n zero\n-two\n+2\n*** End Patch\n', files);
    expect(text('a.ts')).toBe('one\ntwo\n');
    expect(patchStream.failures[0]).toMatch(/Hunk 1 of a\.ts .*not applied: its context and removed lines are not in the file/);
  });

  it('applies nothing for a hunk that matches twice', () => {
    const files = { 'a.ts': 'x\ny\nx\ny\n' };
    const { text, patchStream } = stream('*** Begin Patch\n*** Update File: a.ts\n@@\n x\n-y\n+Y\n*** End Patch\n', files);
    expect(text('a.ts')).toBe('x\ny\nx\ny\n');
    expect(patchStream.failures[0]).toMatch(/match 2 places \(lines 1, 3\)/);
  });

  it('waits while the old lines are ambiguous, then places the hunk by the lines after', () => {
    const files = { 'a.ts': 'x\ny\nz1\nx\ny\nz2\n' };
    const { text, patchStream } = stream('*** Begin Patch\n*** Update File: a.ts\n@@\n x\n-y\n+Y\n z2\n*** End Patch\n', files);
    expect(patchStream.failures).toEqual([]);
    expect(text('a.ts')).toBe('x\ny\nz1\nx\nY\nz2\n');
  });

  it('takes a placed hunk back when a later line turns out not to match', () => {
    const files = { 'a.ts': 'one\ntwo\nthree\n' };
    const { text, patchStream, docs } = stream('*** Begin Patch\n*** Update File: a.ts\n@@\n one\n-two\n+TWO\n four\n*** End Patch\n', files);
    expect(text('a.ts')).toBe('one\ntwo\nthree\n');
    expect(patchStream.failures[0]).toMatch(/not where the lines before it are/);
    expect([...hunksOf(docs.get('f0')!).keys()]).toEqual([]);
  });

  it('takes back the hunk a malformed line cut, keeps the hunks before it', () => {
    const files = { 'a.ts': 'a\nb\nc\nd\n' };
    const patch = '*** Begin Patch\n*** Update File: a.ts\n@@\n a\n-b\n+B\n@@\n c\n-d\n+D\n?? bad\n*** End Patch\n';
    const { text, patchStream } = stream(patch, files);
    expect(text('a.ts')).toBe('a\nB\nc\nd\n');
    expect(patchStream.failures.join('\n')).toMatch(/malformed at its line 11/);
  });

  it('an interrupted hunk keeps what it wrote and the rest of its original', () => {
    const ws = workspace({ 'a.ts': 'one\ntwo\nthree\n' });
    const patchStream = new PatchStream('t1', ws.target, quiet);
    patchStream.push('*** Begin Patch\n*** Update File: a.ts\n@@\n one\n-two\n-three\n+2\n+3');
    patchStream.interrupt();
    patchStream.push('\n*** End Patch\n');
    expect(ws.text('a.ts')).toContain('2\n3');
    expect(ws.text('a.ts')!.startsWith('one\n')).toBe(true);
  });

  it('an added line cut mid-way by an interruption is ended with its line break, counted, and shown to the model', () => {
    const ws = workspace({ 'a.ts': 'export function f() {\n  return 1;\n}\n' });
    const patchStream = new PatchStream('t1', ws.target, quiet);
    patchStream.push('*** Begin Patch\n*** Update File: a.ts\n@@\n export function f() {\n+  /** A due d');
    patchStream.interrupt();
    expect(ws.text('a.ts')).toBe('export function f() {\n  /** A due d\n  return 1;\n}\n');
    expect(patchStream.summary()).toBe(
      [
        'updated a.ts (+1 -0)',
        'a.ts: hunk 1 was cut off in the middle of a line (line 2 ends where you stopped). What it wrote is kept in the file as it is; the rest of that hunk and of the patch was not applied. Lines 1-5 now read:',
        '1| export function f() {',
        '2|   /** A due d',
        '3|   return 1;',
        '4| }',
        '5| ',
      ].join('\n'),
    );
  });

  it('a hunk whose added lines come before its context is placed by the context after them', () => {
    const { text, patchStream } = stream('*** Begin Patch\n*** Update File: a.ts\n@@\n+// first\n one\n two\n*** End Patch\n', { 'a.ts': 'zero\none\ntwo\n' });
    expect(patchStream.failures).toEqual([]);
    expect(text('a.ts')).toBe('zero\n// first\none\ntwo\n');
  });

  it('a hunk placed but stopped before it changed anything is not reported as a changed file', () => {
    const ws = workspace({ 'a.ts': 'one\ntwo\n', 'b.ts': 'x\n' });
    const patchStream = new PatchStream('t1', ws.target, quiet);
    patchStream.push('*** Begin Patch\n*** Update File: b.ts\n@@\n-x\n+y\n*** Update File: a.ts\n@@\n one\n');
    patchStream.interrupt();
    expect(patchStream.summary()).toBe('updated b.ts (+1 -1)');
    expect(patchStream.changed().map((c) => c.path)).toEqual(['b.ts']);
  });

  it('refuses to add a file that exists and to update one that does not', () => {
    const { text, patchStream } = stream('*** Begin Patch\n*** Add File: a.ts\n+new\n*** Update File: b.ts\n@@\n x\n+y\n*** End Patch\n', { 'a.ts': 'old\n' });
    expect(text('a.ts')).toBe('old\n');
    expect(patchStream.failures).toHaveLength(2);
  });

  it('deletes and moves files', () => {
    const { text, paths, patchStream } = stream(
      '*** Begin Patch\n*** Delete File: gone.ts\n*** Update File: a.ts\n*** Move to: b.ts\n@@\n-a\n+A\n*** End Patch\n',
      { 'gone.ts': 'x\n', 'a.ts': 'a\n' },
    );
    expect(paths.has('gone.ts')).toBe(false);
    expect(text('b.ts')).toBe('A\n');
    expect(patchStream.summary()).toBe('deleted gone.ts (+0 -1)\nupdated b.ts (+1 -1)');
  });

  // [R5] through the engine: however the model's output is cut, the files end the same.
  it('gives the same files for any chunking of the patch (seeded)', () => {
    const expected = stream(twoFiles, { 'src/task.ts': taskTs });
    fc.assert(
      fc.property(fc.array(fc.nat(twoFiles.length), { maxLength: 40 }), (cuts) => {
        const points = [...new Set([0, ...cuts, twoFiles.length])].sort((a, b) => a - b);
        const chunks = points.slice(1).map((end, i) => twoFiles.slice(points[i], end));
        const run = stream(twoFiles, { 'src/task.ts': taskTs }, chunks);
        expect(run.text('src/task.ts')).toBe(expected.text('src/task.ts'));
        expect(run.text('src/due.ts')).toBe(expected.text('src/due.ts'));
        expect(run.patchStream.summary()).toBe(expected.patchStream.summary());
      }),
      propertyParameters(200),
    );
  });

  // A malformed patch never leaves a partial wrong edit: each file is either as a prefix of the
  // patch's complete hunks would leave it, or untouched.
  it('never applies a partial hunk of a patch cut or corrupted anywhere (seeded)', () => {
    const files = { 'src/task.ts': taskTs };
    fc.assert(
      fc.property(fc.nat(twoFiles.length), fc.constantFrom('', '?? junk\n', '*** Bogus\n'), (at, junk) => {
        const broken = twoFiles.slice(0, at) + junk;
        const run = stream(broken, files);
        // Whatever the task file reads, it is the original with some prefix of the hunks applied.
        const allowed = new Set([taskTs]);
        for (let n = 1; n <= 2; n++) {
          const change = changesOf(twoFiles)[0]!;
          allowed.add(applied(taskTs, { ...change, hunks: change.hunks.slice(0, n) }));
        }
        expect(allowed.has(run.text('src/task.ts')!)).toBe(true);
      }),
      propertyParameters(200),
    );
  });
});
