import { describe, expect, it } from 'vitest';
import { applyPatchToText, collectFileChanges, locateHunk } from './index';
import { readAll } from './testPatches';

const doc = (...lines: string[]) => `${lines.join('\n')}\n`;

describe('locateHunk', () => {
  const text = doc('function a() {', '  return 1;', '}', 'function b() {', '  return 1;', '}');

  it('[R9] gives the range of lines found exactly once, line breaks included', () => {
    expect(locateHunk(text, { oldLines: ['function b() {', '  return 1;'] })).toEqual({
      ok: true,
      start: 29,
      end: 56,
      firstLine: 3,
      lineCount: 2,
      level: 'exact',
    });
  });

  it('[R9] lines found twice are ambiguous, and lines found nowhere are not found', () => {
    expect(locateHunk(text, { oldLines: ['  return 1;'] })).toEqual({ ok: false, reason: 'ambiguous', candidateLines: [1, 4] });
    expect(locateHunk(text, { oldLines: ['  return 2;'] })).toEqual({ ok: false, reason: 'not_found', what: 'lines' });
  });

  it('[R9] only lines starting at or after `from` count', () => {
    expect(locateHunk(text, { oldLines: ['  return 1;'] }, 27)).toMatchObject({ ok: true, firstLine: 4 });
    expect(locateHunk(text, { oldLines: ['function a() {'] }, 1)).toMatchObject({ ok: false, reason: 'not_found' });
  });

  it('[R10] trailing whitespace, then indentation, is ignored only when nothing matches more strictly', () => {
    const drifted = doc('if (x) {  ', '\tcall();', '}', '    call();');
    expect(locateHunk(drifted, { oldLines: ['if (x) {', '\tcall();'] })).toMatchObject({ ok: true, firstLine: 0, level: 'trim_end' });
    expect(locateHunk(drifted, { oldLines: ['  if (x) {', '  call();'] })).toMatchObject({ ok: true, firstLine: 0, level: 'trim' });
    // The exact line decides; the one that matches only when trimmed is not a second place.
    expect(locateHunk(drifted, { oldLines: ['\tcall();'] })).toMatchObject({ ok: true, firstLine: 1, level: 'exact' });
    expect(locateHunk(drifted, { oldLines: ['call();'] })).toMatchObject({ ok: false, reason: 'ambiguous' });
  });

  it('[R11] a header narrows the search to the nearest match after it', () => {
    expect(locateHunk(text, { header: 'function b() {', oldLines: ['  return 1;'] })).toMatchObject({ ok: true, firstLine: 4 });
    expect(locateHunk(text, { header: 'function a() {', oldLines: ['  return 1;'] })).toMatchObject({ ok: true, firstLine: 1 });
    expect(locateHunk(text, { header: 'function c() {', oldLines: ['  return 1;'] })).toEqual({ ok: false, reason: 'not_found', what: 'header' });
    expect(locateHunk(text, { header: '  function b() {  ', oldLines: ['return 1;'] })).toMatchObject({ ok: true, firstLine: 4, level: 'trim' });
  });

  it('[R11] a header found twice places the hunk only when both lead to the same lines', () => {
    expect(locateHunk(text, { header: '}', oldLines: ['  return 1;'] })).toMatchObject({ ok: true, firstLine: 4 });
    expect(locateHunk(text, { header: '  return 1;', oldLines: ['}'] })).toEqual({ ok: false, reason: 'ambiguous', candidateLines: [2, 5] });
  });

  it('[R12] a hunk without old lines goes right after its header, or at the end', () => {
    expect(locateHunk(text, { header: 'function a() {', oldLines: [] })).toMatchObject({ ok: true, start: 15, end: 15 });
    expect(locateHunk(text, { oldLines: [] })).toMatchObject({ ok: true, start: text.length, end: text.length });
    expect(locateHunk(text, { header: '}', oldLines: [] })).toMatchObject({ ok: false, reason: 'ambiguous' });
  });

  it('[R12] End of File accepts only lines that end the document', () => {
    expect(locateHunk(text, { oldLines: ['  return 1;', '}'], endOfFile: true })).toMatchObject({ ok: true, firstLine: 4 });
    expect(locateHunk(text, { oldLines: ['function a() {'], endOfFile: true })).toMatchObject({ ok: false, reason: 'not_found' });
  });
});

describe('applyPatchToText', () => {
  const filesOf = (patch: string) => collectFileChanges(readAll([patch]));

  it('[R13] replaces each hunk in turn, each after the previous one', () => {
    const [file] = filesOf('*** Begin Patch\n*** Update File: a\n@@\n-b\n+B\n@@\n-a\n+A\n*** End Patch\n');
    expect(applyPatchToText('a\nb\na\n', file!)).toEqual({ ok: true, text: 'a\nB\nA\n' });
  });

  it('[R13] a file without a final line break keeps that ending', () => {
    const [file] = filesOf('*** Begin Patch\n*** Update File: a\n a\n-b\n+c\n+d\n*** End Patch\n');
    expect(applyPatchToText('a\nb', file!)).toEqual({ ok: true, text: 'a\nc\nd' });
    expect(applyPatchToText('a\nb\n', file!)).toEqual({ ok: true, text: 'a\nc\nd\n' });
  });

  it('[R13] the first hunk that cannot be placed fails the file, named', () => {
    const [file] = filesOf('*** Begin Patch\n*** Update File: a\n@@\n-a\n+A\n@@\n-zzz\n+Z\n*** End Patch\n');
    expect(applyPatchToText('a\nb\n', file!)).toEqual({ ok: false, hunkIndex: 1, line: 6, failure: { ok: false, reason: 'not_found', what: 'lines' } });
  });

  it('[R13] adds, deletes and moves files; takes one file’s events as well', () => {
    const events = readAll(['*** Begin Patch\n*** Add File: n.md\n+hi\n+\n*** Add File: empty\n*** Delete File: old\n*** End Patch\n']);
    const [added, empty, deleted] = collectFileChanges(events);
    expect(applyPatchToText('', added!)).toEqual({ ok: true, text: 'hi\n\n' });
    expect(applyPatchToText('', empty!)).toEqual({ ok: true, text: '' });
    expect(applyPatchToText('gone\n', deleted!)).toEqual({ ok: true, text: null });
    expect(applyPatchToText('', events.slice(0, 6))).toEqual({ ok: true, text: 'hi\n\n' });
    const [moved] = filesOf('*** Begin Patch\n*** Update File: a\n*** Move to: b\n x\n*** End Patch\n');
    expect(moved).toMatchObject({ path: 'a', moveTo: 'b' });
    expect(applyPatchToText('x\n', moved!)).toEqual({ ok: true, text: 'x\n' });
  });
});
