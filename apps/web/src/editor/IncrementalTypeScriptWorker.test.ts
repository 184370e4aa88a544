import { propertyParameters } from '@flint/test-kit';
import fc from 'fast-check';
import { typescript } from 'monaco-editor/languages/features/typescript/lib/typescriptServices';
import { TypeScriptWorker, type WorkerContext } from 'monaco-editor/languages/features/typescript/tsWorker';
import { describe, expect, it } from 'vitest';
import { changeRangeBetween, IncrementalTypeScriptWorker } from './IncrementalTypeScriptWorker';

/** A small alphabet, so that the two sides of an edit often repeat each other. */
const char = fc.constantFrom(...'ab\n x');

/**
 * Insert, delete or replace a few characters somewhere: the offset is any natural, taken modulo
 * the text it lands in, so an edit applies to any text.
 */
const anyEdit = fc.record({ at: fc.nat(), removed: fc.nat({ max: 5 }), inserted: fc.string({ unit: char, maxLength: 4, size: 'max' }) });

function edit(text: string, { at, removed, inserted }: { at: number; removed: number; inserted: string }): string {
  const from = at % (text.length + 1);
  return text.slice(0, from) + inserted + text.slice(from + Math.min(removed, text.length - from));
}

describe('changeRangeBetween', () => {
  it('describes one edit that turns the old text into the new one, keeping their common ends', () => {
    const texts = fc
      .tuple(fc.string({ unit: char, maxLength: 29, size: 'max' }), fc.array(anyEdit, { minLength: 1, maxLength: 3, size: 'max' }))
      .map(([before, edits]) => ({ before, after: edits.reduce(edit, before) }));
    fc.assert(
      fc.property(texts, ({ before, after }) => {
        const { span, newLength } = changeRangeBetween(before, after);
        expect(span.start + span.length).toBeLessThanOrEqual(before.length);
        expect(before.slice(0, span.start) + after.slice(span.start, span.start + newLength) + before.slice(span.start + span.length)).toBe(after);
        // Nothing shared is inside the range: its first and last characters differ (when both sides have one).
        if (span.length > 0 && newLength > 0) {
          expect(before[span.start]).not.toBe(after[span.start]);
          expect(before[span.start + span.length - 1]).not.toBe(after[span.start + newLength - 1]);
        }
      }),
      propertyParameters(400),
    );
  });

  it('is empty for equal texts', () => {
    expect(changeRangeBetween('abc', 'abc')).toEqual({ span: { start: 3, length: 0 }, newLength: 0 });
  });
});

/** Monaco's worker host, reduced to what a language worker reads: one mirrored model. */
function oneModel(initial: string): WorkerContext & { set(text: string): void } {
  const model = { uri: { path: '/main.ts', toString: () => 'file:///main.ts' }, version: 1, text: initial, getValue: () => model.text };
  return {
    getMirrorModels: () => [model],
    set(text: string) {
      model.text = text;
      model.version++;
    },
  };
}

const createData = { compilerOptions: { target: 99, module: 99, strict: true, allowNonTsExtensions: true }, extraLibs: {} };

function sourceFileOf(worker: TypeScriptWorker) {
  const service = (worker as unknown as { getLanguageService(): { getProgram(): { getSourceFile(name: string): { statements: readonly object[] } } } }).getLanguageService();
  return service.getProgram().getSourceFile('file:///main.ts');
}

/** Every node's kind and extent, depth first: what two parses of one text must agree on. */
function treeOf(node: object): string {
  const out: string[] = [];
  const visit = (n: { kind: number; pos: number; end: number }) => {
    out.push(`${n.kind}:${n.pos}-${n.end}`);
    typescript.forEachChild(n, visit);
  };
  visit(node as { kind: number; pos: number; end: number });
  return out.join(' ');
}

function functions(count: number): string {
  return Array.from({ length: count }, (_, i) => `export function part${i}(items: number[]): number {\n  return items.length * ${i};\n}\n`).join('');
}

describe('IncrementalTypeScriptWorker', () => {
  it('re-parses only around an edit: the statements it did not touch are the same nodes as before', async () => {
    const context = oneModel(functions(50));
    const worker = new IncrementalTypeScriptWorker(context, createData);
    const monacos = new TypeScriptWorker(oneModel(functions(50)), createData);
    await worker.getSyntacticDiagnostics('file:///main.ts');
    const before = sourceFileOf(worker).statements;
    context.set(functions(50).replace('items.length * 7;', 'items.length * 70;'));
    await worker.getSyntacticDiagnostics('file:///main.ts');
    const after = sourceFileOf(worker).statements;
    expect(after[40]).toBe(before[40]);
    expect(after[7]).not.toBe(before[7]);
    // Monaco's own host parses the whole file again.
    await monacos.getSyntacticDiagnostics('file:///main.ts');
    const monacoBefore = sourceFileOf(monacos).statements;
    (monacos as unknown as { _ctx: ReturnType<typeof oneModel> })._ctx.set(functions(50).replace('items.length * 7;', 'items.length * 70;'));
    await monacos.getSyntacticDiagnostics('file:///main.ts');
    expect(sourceFileOf(monacos).statements[40]).not.toBe(monacoBefore[40]);
  });

  it('parses to the same tree and diagnostics as a full parse after any sequence of edits', async () => {
    // One long sequence: 150 edits of one file, each compared with a full parse.
    const edits = fc.array(anyEdit, { minLength: 150, maxLength: 150 });
    await fc.assert(
      fc.asyncProperty(edits, async (edits) => {
        let text = functions(12);
        const context = oneModel(text);
        const worker = new IncrementalTypeScriptWorker(context, createData);
        // Monaco's own host, fed the same edits, parses every version from scratch.
        const reference = oneModel(text);
        const monacos = new TypeScriptWorker(reference, createData);
        const strip = (list: Array<{ start?: number; length?: number; code: number }>) => list.map(({ start, length, code }) => ({ start, length, code }));
        for (const [step, change] of edits.entries()) {
          text = edit(text, change);
          context.set(text);
          reference.set(text);
          expect(strip(await worker.getSyntacticDiagnostics('file:///main.ts')), `step ${step}`).toEqual(strip(await monacos.getSyntacticDiagnostics('file:///main.ts')));
          expect(treeOf(sourceFileOf(worker)), `step ${step}`).toEqual(treeOf(sourceFileOf(monacos)));
        }
        expect(strip(await worker.getSemanticDiagnostics('file:///main.ts'))).toEqual(strip(await monacos.getSemanticDiagnostics('file:///main.ts')));
      }),
      propertyParameters(1),
    );
  });

  it('reports the diagnostics of the file and of a stand-in text for it, and the file\'s own again on the next request', async () => {
    const context = oneModel('export const count: number = 1;\n');
    const worker = new IncrementalTypeScriptWorker(context, createData);
    const { own, standIn } = await worker.diagnosticsWithStandIn('file:///main.ts', "export const count: number = 'one';\nexport const = 2;\n");
    expect(own).toEqual([]);
    // Syntactic ("Variable declaration expected.") and semantic (a string is not a number).
    expect(standIn.map((d) => d.code)).toEqual(expect.arrayContaining([1134, 2322]));
    expect(standIn.find((d) => d.code === 2322)?.start).toBe(13);
    expect(await worker.getSyntacticDiagnostics('file:///main.ts')).toEqual([]);
    expect(await worker.getSemanticDiagnostics('file:///main.ts')).toEqual([]);
    context.set("export const count: number = 'two';\n");
    expect((await worker.getSemanticDiagnostics('file:///main.ts')).map((d) => d.code)).toEqual([2322]);
  });
});
