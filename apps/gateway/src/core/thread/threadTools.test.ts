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

/** The real event loop's I/O turn, as the gateway's system clock gives it. */
const io = { afterIo: (fn: () => void) => void setImmediate(fn) };
const run = (ws: ToolWorkspace, name: string, args: string) => runTool(ws, name, args, io);

const files = () => workspace({ 'src/a.ts': 'one\ntwo\nthree\n', 'src/lib/b.ts': 'const two = 2;\n', 'README.md': '# two\n' });

describe('the thread tools', () => {
  it('list_files lists the workspace or a folder of it', async () => {
    expect((await run(files(), 'list_files', '{}')).output).toBe('README.md\nsrc/a.ts\nsrc/lib/b.ts');
    expect(await run(files(), 'list_files', '{"path":"src/lib"}')).toMatchObject({ output: 'src/lib/b.ts', summary: 'listed src/lib/ (1)' });
  });

  it('read_file reads a whole file (remembered for later patches) or a range of lines', async () => {
    const whole = await run(files(), 'read_file', '{"path":"src/a.ts"}');
    expect(whole).toMatchObject({ ok: true, output: 'src/a.ts (3 lines):\none\ntwo\nthree', summary: 'read src/a.ts', read: { fileId: 'id:src/a.ts' } });
    const range = await run(files(), 'read_file', '{"path":"src/a.ts","start_line":2,"end_line":2}');
    expect(range).toMatchObject({ output: 'src/a.ts, lines 2-2 of 3:\ntwo', summary: 'read src/a.ts:2-2', line: 2, read: undefined });
    expect(await run(files(), 'read_file', '{"path":"../etc/passwd"}')).toMatchObject({ ok: false, output: expect.stringMatching(/There is no file/) });
  });

  it('search finds text or a regular expression, per line, with a clear error for a bad pattern', async () => {
    expect((await run(files(), 'search', '{"query":"two"}')).output).toBe('README.md:1: # two\nsrc/a.ts:2: two\nsrc/lib/b.ts:1: const two = 2;');
    expect((await run(files(), 'search', '{"query":"^t","regex":true,"path":"src"}')).output).toBe('src/a.ts:2: two\nsrc/a.ts:3: three');
    expect(await run(files(), 'search', '{"query":"(","regex":true}')).toMatchObject({ ok: false, output: expect.stringMatching(/cannot be used: .*missing closing \)/) });
  });

  it('search matches in linear time (RE2): a catastrophic pattern over lines of a\'s answers at once', async () => {
    // With JavaScript's backtracking engine one such line takes seconds, and each 2 more a's ×4.
    const ws = workspace({ 'a.txt': `${'a'.repeat(28)}!\n`.repeat(50), 'b.txt': 'aaa\n' });
    const found = await run(ws, 'search', JSON.stringify({ query: '(a+)+$', regex: true }));
    expect(found).toMatchObject({ ok: true, output: 'b.txt:1: aaa', summary: 'searched "(a+)+$" (1 match)' });
  });

  it('search refuses what RE2 cannot express with a sentence naming it: backreferences, lookaround, huge programs', async () => {
    const refused = async (query: string) => (await run(files(), 'search', JSON.stringify({ query, regex: true }))).output;
    expect(await refused('(a)\\1')).toMatch(/RE2 syntax.*no backreferences/);
    expect(await refused('x(?=y)')).toMatch(/RE2 syntax.*no lookahead or lookbehind/);
    expect(await refused('(?<!x)y')).toMatch(/RE2 syntax.*no lookahead or lookbehind/);
    expect(await refused('(\\w+\\s?){1,1000}$')).toMatch(/too large to search with \(\d+ instructions; at most 2000\)/);
  });

  it('a search over megabytes yields to I/O between slices: other work (a keystroke) runs before it ends', async () => {
    // 4 MB of lines the pattern reads whole: many slices of work, each within a frame.
    const big = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`f${i}.txt`, `${'ab'.repeat(500)}\n`.repeat(100)]));
    const events: string[] = [];
    const search = run(workspace(big), 'search', JSON.stringify({ query: '(a|b)+c', regex: true })).then(() => events.push('search done'));
    setImmediate(() => events.push('probe served'));
    await search;
    expect(events).toEqual(['probe served', 'search done']);
  });

  it('rename_file and delete_file go through the workspace and report its refusals', async () => {
    const ws = files();
    expect(await run(ws, 'rename_file', '{"from":"src/a.ts","to":"src/c.ts"}')).toMatchObject({ ok: true, summary: 'renamed src/a.ts → src/c.ts' });
    expect(ws.paths()).toContain('src/c.ts');
    expect(await run(ws, 'delete_file', '{"path":"nope"}')).toMatchObject({ ok: false, output: '"nope" does not exist.' });
  });

  it('answers malformed arguments and unknown tools with a sentence, never a throw', async () => {
    expect(await run(files(), 'read_file', '{"path": ')).toMatchObject({ ok: false, output: 'The arguments of read_file are not a JSON object.' });
    expect(await run(files(), 'read_file', '[1]')).toMatchObject({ ok: false });
    expect(await run(files(), 'run_shell', '{}')).toMatchObject({ ok: false, output: expect.stringMatching(/There is no tool "run_shell"\. The tools are: list_files/) });
  });
});
