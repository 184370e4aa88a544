/** Test support: reading helpers, a live applier driven by events, and generated V4A patches. */
import fc from 'fast-check';
import { locateHunk } from './locateHunk';
import { PatchReader, type PatchEvent } from './PatchReader';

/** Every event of reading `chunks` and, unless told not to, finishing. */
export function readAll(chunks: Iterable<string>, finish = true): PatchEvent[] {
  const reader = new PatchReader();
  const events: PatchEvent[] = [];
  for (const chunk of chunks) events.push(...reader.push(chunk));
  if (finish) events.push(...reader.finish());
  return events;
}

/** Adjacent `added` texts merged: the form in which chunkings are compared ([R5]). */
export function merged(events: readonly PatchEvent[]): PatchEvent[] {
  const out: PatchEvent[] = [];
  for (const event of events) {
    const last = out.at(-1);
    if (event.type === 'added' && last?.type === 'added') out[out.length - 1] = { type: 'added', text: last.text + event.text };
    else out.push(event);
  }
  return out;
}

/** Whether `early` (merged) is where `full` (merged) stood: equal, but its last `added` may be shorter. */
export function isPrefixStream(early: readonly PatchEvent[], full: readonly PatchEvent[]): boolean {
  return early.every((event, i) => {
    const other = full[i];
    if (i === early.length - 1 && event.type === 'added' && other?.type === 'added') return other.text.startsWith(event.text);
    return JSON.stringify(event) === JSON.stringify(other);
  });
}

/** Splits `text` by `sizes`, in turn and over again; a 0 is an empty chunk. */
export function chunksOf(text: string, sizes: readonly number[]): string[] {
  const chunks: string[] = [];
  for (let at = 0, k = 0; at < text.length; k += 1) {
    const size = sizes[k % sizes.length]!;
    chunks.push(text.slice(at, at + size));
    at += size;
    if (k % sizes.length === sizes.length - 1 && sizes.every((s) => s === 0)) break;
  }
  return chunks;
}

export const chunking: fc.Arbitrary<number[]> = fc.oneof(
  fc.constant<number[]>([1]),
  fc.array(fc.nat(12), { minLength: 1, maxLength: 6 }).map((sizes) => [...sizes, 1]),
);

type Place = 'patch' | 'file' | 'hunk' | 'over';

/** Where each event may stand, and where it leaves the reader ([R3]); an error may stand anywhere. */
const transitions: Record<PatchEvent['type'], readonly [Place | 'any', Place]> = {
  'file-start': ['patch', 'file'],
  'hunk-start': ['file', 'hunk'],
  context: ['hunk', 'hunk'],
  removed: ['hunk', 'hunk'],
  added: ['hunk', 'hunk'],
  'hunk-end': ['hunk', 'file'],
  'file-end': ['file', 'patch'],
  end: ['patch', 'over'],
  error: ['any', 'over'],
};

/** Checks the order of [R3]; returns what is wrong, or null. */
export function grammarProblem(events: readonly PatchEvent[]): string | null {
  let place: Place = 'patch';
  for (const [i, event] of events.entries()) {
    const [from, to] = transitions[event.type];
    if (place === 'over' || (from !== 'any' && from !== place)) return `event ${i} (${event.type}) in place "${place}"`;
    place = to;
  }
  return null;
}

/**
 * Applies events to documents as a streaming engine would meet them: each hunk is placed in
 * the document as already edited, after the new text of the previous hunk of its file.
 * Returns each touched path's text (null: deleted), or the first hunk that could not be placed.
 */
export function applyEventsLive(originals: ReadonlyMap<string, string>, events: readonly PatchEvent[]): Map<string, string | null> | string {
  const result = new Map<string, string | null>();
  let path = '';
  let kind = 'add';
  let doc = '';
  let missingBreak = false;
  let from = 0;
  let hunk = { header: undefined as string | undefined, oldLines: [] as string[], newText: '' };
  for (const event of events) {
    switch (event.type) {
      case 'file-start': {
        path = event.moveTo ?? event.path;
        kind = event.kind;
        const original = event.kind === 'update' ? (originals.get(event.path) ?? '') : '';
        missingBreak = original !== '' && !original.endsWith('\n');
        doc = missingBreak ? `${original}\n` : original;
        from = 0;
        if (event.kind === 'delete') result.set(path, null);
        if (event.moveTo !== undefined) result.set(event.path, null);
        break;
      }
      case 'hunk-start':
        hunk = { header: event.header, oldLines: [], newText: '' };
        break;
      case 'context':
        hunk.oldLines.push(event.text);
        hunk.newText += `${event.text}\n`;
        break;
      case 'removed':
        hunk.oldLines.push(event.text);
        break;
      case 'added':
        hunk.newText += event.text;
        break;
      case 'hunk-end': {
        const found = locateHunk(doc, { ...(hunk.header === undefined ? {} : { header: hunk.header }), oldLines: hunk.oldLines, endOfFile: event.endOfFile }, from);
        if (!found.ok) return `${path}: ${JSON.stringify(found)}`;
        doc = doc.slice(0, found.start) + hunk.newText + doc.slice(found.end);
        from = found.start + hunk.newText.length;
        break;
      }
      case 'file-end':
        if (kind !== 'delete') result.set(path, missingBreak && doc.endsWith('\n') ? doc.slice(0, -1) : doc);
        break;
      case 'end':
      case 'error':
        return result;
    }
  }
  return result;
}

// ---- Generated patches ------------------------------------------------------------------------

export interface GeneratedFile {
  readonly kind: 'add' | 'delete' | 'update';
  readonly path: string;
  readonly moveTo?: string;
  readonly original: string;
  /** The intended text after the patch; null when deleted. */
  readonly expected: string | null;
}

export interface GeneratedPatch {
  readonly text: string;
  readonly files: readonly GeneratedFile[];
}

/** Text of a line: prefixes, markers, blanks, CR, accents and surrogate pairs included. */
const lineText = fc.string({ unit: fc.constantFrom('a', 'b', ' ', '\t', '+', '-', '*', '@', 'é', '😀', '\r'), maxLength: 8 });

const hunkSpec = fc.record({
  skip: fc.nat(3),
  before: fc.nat(2),
  removed: fc.nat(3),
  added: fc.array(lineText, { maxLength: 3 }),
  after: fc.nat(2),
  header: fc.boolean(),
  bare: fc.boolean(),
  endOfFile: fc.boolean(),
});

const fileSpec = fc.record({
  kind: fc.constantFrom('add', 'delete', 'update', 'update', 'update'),
  lines: fc.array(lineText, { minLength: 1, maxLength: 12 }),
  finalBreak: fc.boolean(),
  move: fc.boolean(),
  hunks: fc.array(hunkSpec, { minLength: 1, maxLength: 4 }),
});

type FileSpec = typeof fileSpec extends fc.Arbitrary<infer T> ? T : never;

const text = (lines: readonly string[], finalBreak = true) => (lines.length === 0 ? '' : lines.join('\n') + (finalBreak ? '\n' : ''));

/** Renders one file's edits as V4A; every document line is unique (it ends in `#index`). */
function renderFile(spec: FileSpec, index: number): { lines: string[]; file: GeneratedFile } {
  const path = `src/f${index}.ts`;
  if (spec.kind === 'add') {
    return { lines: [`*** Add File: ${path}`, ...spec.lines.map((line) => `+${line}`)], file: { kind: 'add', path, original: '', expected: text(spec.lines) } };
  }
  const docLines = spec.lines.map((line, i) => `${line}#${i}`);
  const original = text(docLines, spec.finalBreak);
  if (spec.kind === 'delete') return { lines: [`*** Delete File: ${path}`], file: { kind: 'delete', path, original, expected: null } };

  const out = [`*** Update File: ${path}`, ...(spec.move ? [`*** Move to: moved/f${index}.ts`] : [])];
  const newLines: string[] = [];
  let at = 0;
  for (const [k, hunk] of spec.hunks.entries()) {
    const start = k === 0 ? Math.min(hunk.skip, docLines.length - 1) : at + hunk.skip;
    if (start >= docLines.length) break;
    const take = (from: number, count: number) => docLines.slice(from, Math.min(from + count, docLines.length));
    const before = take(start, hunk.before);
    const removed = take(start + before.length, before.length + hunk.removed === 0 ? 1 : hunk.removed);
    const after = take(start + before.length + removed.length, hunk.after);
    const end = start + before.length + removed.length + after.length;
    const header = hunk.header && start - 1 >= at ? docLines[start - 1] : undefined;
    if (header !== undefined) out.push(`@@ ${header}`);
    else if (!(k === 0 && hunk.bare)) out.push('@@');
    out.push(...before.map((l) => ` ${l}`), ...removed.map((l) => `-${l}`), ...hunk.added.map((l) => `+${l}`), ...after.map((l) => ` ${l}`));
    if (hunk.endOfFile && end === docLines.length) out.push('*** End of File');
    newLines.push(...docLines.slice(at, start), ...before, ...hunk.added, ...after);
    at = end;
    if (out.at(-1) === '*** End of File') break;
  }
  newLines.push(...docLines.slice(at));
  const missingBreak = !spec.finalBreak;
  const expected = newLines.length === 0 ? '' : newLines.join('\n') + (missingBreak ? '' : '\n');
  const file: GeneratedFile = { kind: 'update', path, original, expected, ...(spec.move ? { moveTo: `moved/f${index}.ts` } : {}) };
  return { lines: out, file };
}

export const generatedPatch: fc.Arbitrary<GeneratedPatch> = fc
  .record({ files: fc.array(fileSpec, { maxLength: 4 }), finalBreak: fc.boolean() })
  .map(({ files, finalBreak }) => {
    const rendered = files.map(renderFile);
    const lines = ['*** Begin Patch', ...rendered.flatMap((r) => r.lines), '*** End Patch'];
    return { text: lines.join('\n') + (finalBreak ? '\n' : ''), files: rendered.map((r) => r.file) };
  });

