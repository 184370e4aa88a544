import { describe, expect, it } from 'vitest';
import { buildThreadPrompt, charsPerToken, type ThreadPromptInput } from './threadPrompt';

const base: ThreadPromptInput = {
  mode: 'tools',
  paths: ['src/a.ts', 'src/b.ts'],
  history: [],
  open: null,
  mentions: [],
  rejected: [],
  message: 'add a dueDate',
  by: 'Alice',
  contextTokens: 128_000,
  maxOutputTokens: 4096,
};
const size = (messages: { content: string }[]) => messages.reduce((n, m) => n + m.content.length, 0) / charsPerToken;

describe('buildThreadPrompt', () => {
  it('puts the stable prefix first and the message with its context last', () => {
    const prompt = buildThreadPrompt({
      ...base,
      open: { path: 'src/a.ts', text: 'one\ntwo\n', selection: { startLine: 2, endLine: 2, text: 'two' } },
      mentions: [{ path: 'src/b.ts', text: 'b' }],
      rejected: ['src/a.ts: Note: rejected'],
    });
    expect(prompt.messages[0]).toMatchObject({ role: 'system', content: expect.stringContaining('Files in the workspace (2):\nsrc/a.ts\nsrc/b.ts') });
    const last = prompt.messages.at(-1)!.content;
    expect(last).toMatch(/^The file on screen \(src\/a\.ts, lines 2-2 selected\)/);
    expect(last).toContain('@src/b.ts:\n<file path="src/b.ts">\nb\n</file>');
    expect(last).toContain('people rejected some of your changes:\nsrc/a.ts: Note: rejected');
    expect(last.endsWith('Alice: add a dueDate')).toBe(true);
    expect(prompt.trimmed).toBeNull();
  });

  it('retells the thread: people by name, answers with their tool steps where they ran', () => {
    const prompt = buildThreadPrompt({
      ...base,
      history: [
        { kind: 'user', text: 'hi', author: 'Bob' },
        { kind: 'tool', text: '', summary: 'read src/a.ts' },
        { kind: 'assistant', text: 'Done.' },
        { kind: 'notice', text: 'ignored' },
      ],
    });
    expect(prompt.messages.slice(1, -1)).toEqual([
      { role: 'user', content: 'Bob: hi' },
      { role: 'assistant', content: '(Tool steps: read src/a.ts.)\nDone.' },
    ]);
  });

  it('leaves out the oldest messages first, then mentions, then cuts the open file, and says so', () => {
    const long = 'x'.repeat(3000);
    const history = Array.from({ length: 20 }, (_, i) => ({ kind: i % 2 ? ('assistant' as const) : ('user' as const), text: `${i} ${long}` }));
    const prompt = buildThreadPrompt({ ...base, history, contextTokens: 8000, maxOutputTokens: 1000 });
    expect(size(prompt.messages)).toBeLessThanOrEqual(8000 - 1000);
    expect(prompt.messages[1]!.role).toBe('user');
    expect(prompt.trimmed).toMatch(/^Left out to fit the model's window: \d+ older messages of the thread\.$/);

    const cut = buildThreadPrompt({
      ...base,
      contextTokens: 2048,
      maxOutputTokens: 512,
      mentions: [{ path: 'big.ts', text: long }],
      open: { path: 'src/a.ts', text: `${long}\nSELECTED\n${long}`, selection: { startLine: 2, endLine: 2, text: 'SELECTED' } },
    });
    expect(size(cut.messages)).toBeLessThanOrEqual(2048 - 512);
    expect(cut.messages.at(-1)!.content).toContain('SELECTED');
    expect(cut.trimmed).toMatch(/@big\.ts, most of src\/a\.ts/);
  });
});
