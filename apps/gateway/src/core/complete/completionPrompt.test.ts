import { describe, expect, it } from 'vitest';
import { buildCompletionContext, charsPerToken } from './completionPrompt';
import { identifiersNearCursor, relatedSnippets } from './relatedSnippets';

/** A context for `source`, the cursor where `|` is. */
function contextAt(source: string, openFiles: Array<{ path: string; text: string }> = [], promptTokens = 2048) {
  const cursor = source.indexOf('|');
  const text = source.slice(0, cursor) + source.slice(cursor + 1);
  return buildCompletionContext({ path: 'src/main.ts', text, cursor, openFiles, promptTokens, maxLines: 16 });
}

describe('completion prompt', () => {
  it('takes the text before and after the cursor when the file fits', () => {
    const { prompt } = contextAt('const a = 1;\nconst b = |;\nexport { a };\n');
    expect(prompt.prefix).toBe('const a = 1;\nconst b = ');
    expect(prompt.suffix).toBe(';\nexport { a };\n');
    expect(prompt.path).toBe('src/main.ts');
  });

  it('cuts a long file on line boundaries within the budget', () => {
    const lines = Array.from({ length: 400 }, (_, i) => `const value${i} = ${i};`);
    const source = `${lines.slice(0, 200).join('\n')}\nconst x = |;\n${lines.slice(200).join('\n')}`;
    const { prompt } = contextAt(source, [], 200);
    expect(prompt.prefix.length).toBeLessThanOrEqual(200 * charsPerToken * 0.65);
    expect(prompt.prefix.endsWith('const x = ')).toBe(true);
    expect(prompt.prefix.startsWith('const value')).toBe(true);
    expect(prompt.suffix.length).toBeLessThanOrEqual(200 * charsPerToken * 0.2);
    expect(prompt.suffix.endsWith(';')).toBe(true);
  });

  it('keeps the start of the prefix still while the user types, so prompt caches hit', () => {
    const body = Array.from({ length: 300 }, (_, i) => `let v${i} = ${i};`).join('\n');
    const starts = new Set<string>();
    let typed = '';
    for (const c of 'const total = items.length') {
      typed += c;
      starts.add(contextAt(`${body}\n${typed}|\n`, [], 300).prompt.prefix.slice(0, 40));
    }
    expect(starts.size).toBe(1);
  });

  it('wants one line mid-line, a block at the end of a line or inside an auto-closed block', () => {
    expect(contextAt('foo(|, 2);\n').shape).toMatchObject({ singleLine: true, maxLines: 1, lineSuffix: ', 2);' });
    expect(contextAt('function f() {|\n').shape).toMatchObject({ singleLine: false, baseIndent: 0 });
    expect(contextAt('function f() {|}\n').shape).toMatchObject({ singleLine: false, nextSuffixLine: '}', nextSuffixOnCursorLine: true });
    expect(contextAt('log("|")\n').shape.singleLine).toBe(true);
    const inside = contextAt('if (x) {\n    |\n  }\n').shape;
    expect(inside).toMatchObject({ singleLine: false, baseIndent: 4, nextSuffixLine: '}', nextSuffixOnCursorLine: false });
  });
});

describe('related snippets', () => {
  const cart = { path: 'src/cart.ts', text: 'import { x } from "y";\n\nexport function totalPrice(items: Item[]): number {\n  let sum = 0;\n  for (const item of items) sum += item.price;\n  return sum;\n}\n' };
  const item = { path: 'src/item.ts', text: 'export interface Item {\n  price: number;\n  name: string;\n}\n\nexport const noise = 1;\n' };

  it('weighs identifiers by closeness to the cursor, skipping keywords and the word being typed', () => {
    const weights = identifiersNearCursor('const items = load();\nconst t = totalPr', '');
    expect(weights.has('const')).toBe(false);
    expect(weights.has('totalPr')).toBe(false);
    expect(weights.get('load')!).toBeGreaterThan(weights.get('items')!);
  });

  it('brings the definitions of names used near the cursor, definitions first', () => {
    const snippets = relatedSnippets({ before: 'const items: Item[] = [];\nconst t = totalPrice(items', after: ');\n', files: [cart, item], budgetChars: 1000 });
    expect(snippets.map((s) => s.path)).toEqual(['src/cart.ts', 'src/item.ts']);
    expect(snippets[0]!.text.startsWith('export function totalPrice(items: Item[]): number {')).toBe(true);
    expect(snippets[1]!.text).toContain('export interface Item {\n  price: number;');
    expect(snippets[1]!.text).not.toContain('noise');
  });

  it('stays within its budget and is deterministic', () => {
    const options = { before: 'totalPrice(items) + Item', after: '', files: [cart, item], budgetChars: 120 };
    const first = relatedSnippets(options);
    expect(first.reduce((n, s) => n + s.text.length + 1, 0)).toBeLessThanOrEqual(120);
    expect(relatedSnippets(options)).toEqual(first);
    expect(relatedSnippets({ ...options, budgetChars: 0 })).toEqual([]);
  });

  it('a prompt carries snippets of the other open files', () => {
    const { prompt } = contextAt('const t = totalPrice(|);\n', [cart]);
    expect(prompt.snippets[0]?.path).toBe('src/cart.ts');
  });
});
