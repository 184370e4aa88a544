import { describe, expect, it } from 'vitest';
import { runTool, type ToolWorkspace } from './threadTools';

function workspace(files: Record<string, string>): ToolWorkspace & { files: Record<string, string> } {
  return {
    files,
    paths: () => Object.keys(files).sort(),
    read: (path) => (path in files ? { fileId: `id:${path}`, text: files[path]! } : null),
    rename: (from, to) => (from in files ? ((files[to] = files[from]!), delete files[from], { ok: true }) : { ok: false, message: `"${from}" does not exist.` }),
    remove: (path) => (path in files ? (delete files[path], { ok: true }) : { ok: false, message: `"${path}" does not exist.` }),
  };
}

const files = () => workspace({ 'src/a.ts': 'one\ntwo\nthree\n', 'src/lib/b.ts': 'const two = 2;\n', 'README.md': '# two\n' });

describe('the thread tools', () => {
  it('list_files lists the workspace or a folder of it', () => {
    expect(runTool(files(), 'list_files', '{}').output).toBe('README.md\nsrc/a.ts\nsrc/lib/b.ts');
    expect(runTool(files(), 'list_files', '{"path":"src/lib"}')).toMatchObject({ output: 'src/lib/b.ts', summary: 'listed src/lib/ (1)' });
  });

  it('read_file reads a whole file (remembered for later patches) or a range of lines', () => {
    const whole = runTool(files(), 'read_file', '{"path":"src/a.ts"}');
    expect(whole).toMatchObject({ ok: true, output: 'src/a.ts (3 lines):\none\ntwo\nthree', summary: 'read src/a.ts', read: { fileId: 'id:src/a.ts' } });
    const range = runTool(files(), 'read_file', '{"path":"src/a.ts","start_line":2,"end_line":2}');
    expect(range).toMatchObject({ output: 'src/a.ts, lines 2-2 of 3:\ntwo', summary: 'read src/a.ts:2-2', line: 2, read: undefined });
    expect(runTool(files(), 'read_file', '{"path":"../etc/passwd"}')).toMatchObject({ ok: false, output: expect.stringMatching(/There is no file/) });
  });

  it('search finds text or a regular expression, per line, with a clear error for a bad pattern', () => {
    expect(runTool(files(), 'search', '{"query":"two"}').output).toBe('README.md:1: # two\nsrc/a.ts:2: two\nsrc/lib/b.ts:1: const two = 2;');
    expect(runTool(files(), 'search', '{"query":"^t","regex":true,"path":"src"}').output).toBe('src/a.ts:2: two\nsrc/a.ts:3: three');
    expect(runTool(files(), 'search', '{"query":"(","regex":true}')).toMatchObject({ ok: false, output: expect.stringMatching(/invalid/) });
  });

  it('rename_file and delete_file go through the workspace and report its refusals', () => {
    const ws = files();
    expect(runTool(ws, 'rename_file', '{"from":"src/a.ts","to":"src/c.ts"}')).toMatchObject({ ok: true, summary: 'renamed src/a.ts → src/c.ts' });
    expect(ws.paths()).toContain('src/c.ts');
    expect(runTool(ws, 'delete_file', '{"path":"nope"}')).toMatchObject({ ok: false, output: '"nope" does not exist.' });
  });

  it('answers malformed arguments and unknown tools with a sentence, never a throw', () => {
    expect(runTool(files(), 'read_file', '{"path": ')).toMatchObject({ ok: false, output: 'The arguments of read_file are not a JSON object.' });
    expect(runTool(files(), 'read_file', '[1]')).toMatchObject({ ok: false });
    expect(runTool(files(), 'run_shell', '{}')).toMatchObject({ ok: false, output: expect.stringMatching(/There is no tool "run_shell"\. The tools are: list_files/) });
  });
});
