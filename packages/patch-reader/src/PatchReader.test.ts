import { describe, expect, it } from 'vitest';
import { PatchReader, type PatchEvent } from './index';
import { readAll } from './testPatches';

const patch = (...lines: string[]) => `${lines.join('\n')}\n`;
const errorOf = (events: PatchEvent[]) => events.find((event) => event.type === 'error');

describe('PatchReader — the format', () => {
  it('[R1][R3] reads added, deleted, moved and updated files into events, in order', () => {
    const text = patch(
      '*** Begin Patch',
      '*** Add File: docs/hello.md',
      '+# Hello',
      '+',
      '*** Delete File: old.ts',
      '*** Update File: src/a.ts',
      '*** Move to: src/b.ts',
      '@@ function f() {',
      ' const a = 1;',
      '-const b = 2;',
      '+const b = 3;',
      '+const c = 4;',
      '@@',
      '-return;',
      '+return a;',
      '*** End of File',
      '*** End Patch',
    );
    expect(readAll([text])).toEqual([
      { type: 'file-start', kind: 'add', path: 'docs/hello.md', line: 2 },
      { type: 'hunk-start', line: 2 },
      { type: 'added', text: '# Hello\n' },
      { type: 'added', text: '\n' },
      { type: 'hunk-end', endOfFile: false },
      { type: 'file-end' },
      { type: 'file-start', kind: 'delete', path: 'old.ts', line: 5 },
      { type: 'file-end' },
      { type: 'file-start', kind: 'update', path: 'src/a.ts', moveTo: 'src/b.ts', line: 6 },
      { type: 'hunk-start', header: 'function f() {', line: 8 },
      { type: 'context', text: 'const a = 1;' },
      { type: 'removed', text: 'const b = 2;' },
      { type: 'added', text: 'const b = 3;\n' },
      { type: 'added', text: 'const c = 4;\n' },
      { type: 'hunk-end', endOfFile: false },
      { type: 'hunk-start', line: 13 },
      { type: 'removed', text: 'return;' },
      { type: 'added', text: 'return a;\n' },
      { type: 'hunk-end', endOfFile: true },
      { type: 'file-end' },
      { type: 'end' },
    ]);
  });

  it('[R1] the first hunk of a file may leave out its @@ line', () => {
    const events = readAll([patch('*** Begin Patch', '*** Update File: a.ts', ' import x', '+import y', '*** End Patch')]);
    expect(events.slice(0, 4)).toEqual([
      { type: 'file-start', kind: 'update', path: 'a.ts', line: 2 },
      { type: 'hunk-start', line: 3 },
      { type: 'context', text: 'import x' },
      { type: 'added', text: 'import y\n' },
    ]);
  });

  it('[R2] a blank hunk line is an empty context line; blank lines between files are skipped', () => {
    const events = readAll([patch('', '*** Begin Patch', '', '*** Update File: a.ts', '@@', ' a', '', '-b', '', '*** End Patch')]);
    expect(events.filter((event) => event.type === 'context')).toEqual([
      { type: 'context', text: 'a' },
      { type: 'context', text: '' },
      { type: 'context', text: '' },
    ]);
    expect(errorOf(events)).toBeUndefined();
  });

  it('[R2] CRLF markers are markers, and a CR in an added line is its text', () => {
    const events = readAll(['*** Begin Patch\r\n*** Add File: a.txt\r\n+x\r\n*** End Patch\r\n']);
    expect(events).toContainEqual({ type: 'added', text: 'x\r\n' });
    expect(events.at(-1)).toEqual({ type: 'end' });
  });
});

describe('PatchReader — streaming', () => {
  it('[R4] an added line streams from its "+", before its line break', () => {
    const reader = new PatchReader();
    expect(reader.push('*** Begin Patch\n*** Add File: a.ts\n+')).toEqual([
      { type: 'file-start', kind: 'add', path: 'a.ts', line: 2 },
      { type: 'hunk-start', line: 2 },
    ]);
    expect(reader.push('const x')).toEqual([{ type: 'added', text: 'const x' }]);
    expect(reader.push(' = 1;')).toEqual([{ type: 'added', text: ' = 1;' }]);
    expect(reader.push('\n')).toEqual([{ type: 'added', text: '\n' }]);
  });

  it('[R4] context and removed lines wait for their line break; an update waits for a possible Move to', () => {
    const reader = new PatchReader();
    expect(reader.push('*** Begin Patch\n*** Update File: a.ts\n')).toEqual([]);
    expect(reader.push('@@ f\n-remo')).toEqual([
      { type: 'file-start', kind: 'update', path: 'a.ts', line: 2 },
      { type: 'hunk-start', header: 'f', line: 3 },
    ]);
    expect(reader.push('ved\n c')).toEqual([{ type: 'removed', text: 'removed' }]);
    expect(reader.push('\n')).toEqual([{ type: 'context', text: 'c' }]);
  });

  it('[R4] the first "+" after Update File opens the file and its hunk at once', () => {
    const reader = new PatchReader();
    reader.push('*** Begin Patch\n*** Update File: a.ts\n');
    expect(reader.push('+ne')).toEqual([
      { type: 'file-start', kind: 'update', path: 'a.ts', line: 2 },
      { type: 'hunk-start', line: 3 },
      { type: 'added', text: 'ne' },
    ]);
  });

  it('[R4] a surrogate pair split across chunks is emitted whole', () => {
    const reader = new PatchReader();
    reader.push('*** Begin Patch\n*** Add File: a.ts\n+a');
    const smile = '😀';
    expect(reader.push(`b${smile[0]}`)).toEqual([{ type: 'added', text: 'b' }]);
    expect(reader.push(`${smile[1]}c`)).toEqual([{ type: 'added', text: `${smile}c` }]);
  });

  it('[R7] the end marker may lack its line break, and what follows its line is not read', () => {
    expect(readAll(['*** Begin Patch\n*** Delete File: a\n*** End Patch']).at(-1)).toEqual({ type: 'end' });
    const events = readAll(['*** Begin Patch\n*** Delete File: a\n*** End Patch\nThat was the patch.\n*** Add File: b\n']);
    expect(events.at(-1)).toEqual({ type: 'end' });
  });

  it('[R7] push after finish, or a second finish, throws', () => {
    const reader = new PatchReader();
    reader.finish();
    expect(() => reader.push('x')).toThrow();
    expect(() => reader.finish()).toThrow();
  });

  it('[R8] paths are stored in NFC', () => {
    const events = readAll([patch('*** Begin Patch', '*** Delete File: cafe\u0301.md', '*** End Patch')]);
    expect(events[0]).toMatchObject({ type: 'file-start', path: 'caf\u00e9.md' });
  });
});

describe('PatchReader — malformed patches', () => {
  const cases: Array<[string, string, string, number]> = [
    ['[R6] text before Begin Patch', 'Here is the patch:\n*** Begin Patch\n*** End Patch\n', 'missing_begin', 1],
    ['[R6] an empty patch', '', 'missing_begin', 1],
    ['[R6] no End Patch at finish', '*** Begin Patch\n*** Delete File: a\n', 'missing_end', 3],
    ['[R6] a patch cut in mid-line', '*** Begin Patch\n*** Add File: a\n+hal', 'missing_end', 3],
    ['[R6] a hunk line without a prefix', '*** Begin Patch\n*** Update File: a\n@@\n a\nb\n*** End Patch\n', 'bad_line', 5],
    ['[R6] an Add File line without "+"', '*** Begin Patch\n*** Add File: a\n+x\ny\n*** End Patch\n', 'bad_line', 4],
    ['[R6] a blank line in an added file', '*** Begin Patch\n*** Add File: a\n+x\n\n*** End Patch\n', 'bad_line', 4],
    ['[R6] a line between files', '*** Begin Patch\n+x\n*** End Patch\n', 'bad_line', 2],
    ['[R6] an unknown header', '*** Begin Patch\n*** Rename File: a\n*** End Patch\n', 'unknown_header', 2],
    ['[R6] an unknown header after a hunk', '*** Begin Patch\n*** Update File: a\n-x\n*** Create File: b\n', 'unknown_header', 4],
    ['[R6] a second Begin Patch', '*** Begin Patch\n*** Begin Patch\n', 'unknown_header', 2],
    ['[R6] a Move to not right after Update File', '*** Begin Patch\n*** Update File: a\n\n*** Move to: b\n', 'unknown_header', 4],
    ['[R6] a Move to in a hunk', '*** Begin Patch\n*** Update File: a\n-x\n*** Move to: b\n', 'unknown_header', 4],
    ['[R6] End of File in an added file', '*** Begin Patch\n*** Add File: a\n+x\n*** End of File\n', 'unknown_header', 4],
    ['[R6] an Update File without hunks', '*** Begin Patch\n*** Update File: a\n*** End Patch\n', 'empty_file', 3],
    ['[R6] a hunk without lines', '*** Begin Patch\n*** Update File: a\n@@ f\n@@ g\n-x\n*** End Patch\n', 'empty_hunk', 4],
    ['[R6] End of File right after @@', '*** Begin Patch\n*** Update File: a\n@@\n*** End of File\n', 'empty_hunk', 4],
    ['[R6][R8] an absolute path', '*** Begin Patch\n*** Add File: /etc/passwd\n', 'bad_path', 2],
    ['[R6][R8] a path climbing out', '*** Begin Patch\n*** Delete File: src/../../secret\n', 'bad_path', 2],
    ['[R6][R8] an empty path', '*** Begin Patch\n*** Update File:   \n', 'bad_path', 2],
    ['[R6][R8] a Move to that climbs out', '*** Begin Patch\n*** Update File: a\n*** Move to: ../b\n', 'bad_path', 3],
  ];
  for (const [name, text, code, line] of cases) {
    it(`${name} is a ${code} error at line ${line}, and the last event`, () => {
      const events = readAll([text]);
      expect(events.at(-1)).toMatchObject({ type: 'error', code, line });
      expect(events.filter((event) => event.type === 'error')).toHaveLength(1);
    });
  }

  it('[R6] the message names the line and what was expected', () => {
    const error = errorOf(readAll(['*** Begin Patch\n*** Update File: a.ts\n@@\n-x\noops\n']));
    expect(error).toMatchObject({ code: 'bad_line', offset: 44 });
    expect(error && 'message' in error && error.message).toBe(
      'Line 5: Every line of a hunk starts with " " (context), "-" (removed) or "+" (added); got "oops".',
    );
  });

  it('[R6] nothing follows an error, whatever is pushed later', () => {
    const reader = new PatchReader();
    expect(reader.push('*** Begin Patch\n*** Bogus\n*** Add File: a\n+x\n').at(-1)).toMatchObject({ type: 'error' });
    expect(reader.push('*** Add File: b\n+y\n*** End Patch\n')).toEqual([]);
    expect(reader.finish()).toEqual([]);
  });

  it('[R6] a file is not closed by a line that turns out invalid', () => {
    const events = readAll(['*** Begin Patch\n*** Add File: a\n+x\n*** Add File: /abs\n']);
    expect(events.map((event) => event.type)).toEqual(['file-start', 'hunk-start', 'added', 'error']);
  });
});
