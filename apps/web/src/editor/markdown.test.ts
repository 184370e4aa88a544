import { describe, expect, it } from 'vitest';
import { CodeColorizer } from './CodeColorizer';
import { fenceLanguage, renderMarkdown, splitBlocks } from './markdown';

/** Stands in for Monaco's colourer: records what it was asked to colour. */
function recordingHighlighter() {
  const asked: Array<[string, string]> = [];
  const highlight = (code: string, language: string) => {
    asked.push([language, code]);
    return `<span class="colored">${code.length}</span>`;
  };
  return { asked, highlight };
}

describe('the agent\'s Markdown', () => {
  it('shows raw HTML as text', () => {
    const html = renderMarkdown('Hi <script>alert(1)</script> <img src=x onerror=alert(1)>');
    expect(html).not.toContain('<script');
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('links only to http(s), in a new tab without a referrer; other links stay text', () => {
    const html = renderMarkdown('[a](javascript:alert(1)) [b](data:text/html,x) [c](vbscript:x) [d](/relative) [ok](https://example.com/x)');
    expect(html).not.toMatch(/href="(?!https:)/);
    expect(html).toContain('[a](javascript:alert(1))');
    expect(html).toContain('<a href="https://example.com/x" target="_blank" rel="noopener noreferrer nofollow">ok</a>');
    expect(renderMarkdown('see https://example.com now')).toContain('href="https://example.com"');
  });

  it('shows an image as a link (the page loads no outside images), and drops one with a bad source', () => {
    expect(renderMarkdown('![chart](https://example.com/c.png)')).toMatch(/^<p><a href="https:\/\/example.com\/c.png"[^>]*>🖼 chart<\/a><\/p>/);
    expect(renderMarkdown('![x](javascript:alert(1))')).not.toContain('href');
  });

  it('gives a fenced block its language and colours it once closed', () => {
    const { asked, highlight } = recordingHighlighter();
    const html = renderMarkdown('Here:\n\n```ts\nconst a: number = 1;\n```\n\nDone.', { highlight });
    expect(asked).toEqual([['ts', 'const a: number = 1;\n']]);
    expect(html).toContain('<div class="md-code md-code--colored" data-lang="ts"><span class="md-code-lang">ts</span><span class="colored">21</span></div>');
    expect(html).toContain('<p>Done.</p>');
  });

  it('renders a fence still streaming as escaped plain code, and does not colour it yet', () => {
    const { asked, highlight } = recordingHighlighter();
    const html = renderMarkdown('Try:\n\n```tsx\nconst el = <div a="1">{x}</div>;\nfunc', { highlight });
    expect(asked).toEqual([]);
    expect(html).toContain('<pre><code class="language-tsx">const el = &lt;div a=&quot;1&quot;&gt;{x}&lt;/div&gt;;\nfunc</code></pre>');
    // The marker line alone (the model has sent only the opening fence) is an empty block, not text.
    expect(renderMarkdown('```py', { highlight })).toContain('<pre><code class="language-py"></code></pre>');
    expect(asked).toEqual([]);
  });

  it('colours closed fences inside quotes and lists, and leaves a fence without a language plain', () => {
    const { asked, highlight } = recordingHighlighter();
    renderMarkdown('> ```js\n> x()\n> ```\n\n- item\n  ```py\n  y = 1\n  ```\n\n~~~\nplain\n~~~\n', { highlight });
    expect(asked).toEqual([
      ['js', 'x()\n'],
      ['py', 'y = 1\n'],
    ]);
  });

  it('marks inline code that names a workspace file, with its line, and escapes the rest', () => {
    const isPath = (path: string) => path === 'src/a.ts';
    const html = renderMarkdown('See `src/a.ts:12`, `src/a.ts` and `<b>`.', { isPath });
    expect(html).toContain('<code class="md-path" data-path="src/a.ts" data-line="12" role="link" tabindex="0">src/a.ts:12</code>');
    expect(html).toContain('<code class="md-path" data-path="src/a.ts" role="link" tabindex="0">src/a.ts</code>');
    expect(html).toContain('<code>&lt;b&gt;</code>');
  });

  it('reads a fence\'s language from the first word of its info', () => {
    expect(fenceLanguage(' TSX title="a.tsx"')).toBe('tsx');
    expect(fenceLanguage('')).toBe('');
  });
});

describe('splitting an answer into blocks', () => {
  const answer = 'Intro\nstill intro\n\n- a\n- b\n\n```ts\nconst a = 1;\n\nconst b = 2;\n```\n\n1. one\n\n2. two\n\nEnd';

  it('cuts at blank lines outside fences, and the blocks give the text back', () => {
    const blocks = splitBlocks(answer);
    expect(blocks.join('')).toBe(answer);
    expect(blocks).toEqual(['Intro\nstill intro\n\n', '- a\n- b\n\n', '```ts\nconst a = 1;\n\nconst b = 2;\n```\n\n', '1. one\n\n', '2. two\n\n', 'End']);
  });

  it('renders block by block as the whole does, but for loose lists (each keeps its number)', () => {
    expect(splitBlocks(answer).map((block) => renderMarkdown(block)).join('')).toContain('<ol start="2">');
    const tight = 'A\n\n- x\n- y\n\n```\nz\n```\n';
    expect(splitBlocks(tight).map((block) => renderMarkdown(block)).join('')).toBe(renderMarkdown(tight));
  });

  it('keeps the blocks before the last unchanged while the answer grows', () => {
    let previous: string[] = [];
    for (let end = 1; end <= answer.length; end++) {
      const blocks = splitBlocks(answer.slice(0, end));
      expect(blocks.slice(0, -1)).toEqual(previous.slice(0, blocks.length - 1));
      previous = blocks;
    }
  });
});

describe('the code colourer', () => {
  it('colours each (language, code) once and caches it, evicting the least recently used', async () => {
    const calls: string[] = [];
    const colorizer = new CodeColorizer(
      async (code, languageId) => {
        calls.push(`${languageId}:${code}`);
        return `<b>${code}</b>`;
      },
      (language) => (language === 'ts' ? 'typescript' : language === 'js' ? 'javascript' : null),
      2,
    );
    expect(colorizer.lookup('a', 'ts')).toBeNull();
    await Promise.all([colorizer.request('a', 'ts'), colorizer.request('a', 'ts')]);
    expect(calls).toEqual(['typescript:a']);
    expect(colorizer.lookup('a', 'ts')).toBe('<b>a</b>');
    await colorizer.request('b', 'js');
    colorizer.lookup('a', 'ts'); // a is now the most recently used
    await colorizer.request('c', 'ts');
    expect(colorizer.lookup('b', 'js')).toBeNull();
    expect(colorizer.lookup('a', 'ts')).toBe('<b>a</b>');
    await colorizer.request('x', 'cobol');
    expect(calls).toEqual(['typescript:a', 'javascript:b', 'typescript:c']);
    expect(colorizer.wants('x', 'cobol')).toBe(false);
    expect(colorizer.wants('a', 'ts')).toBe(false);
    expect(colorizer.wants('d', 'ts')).toBe(true);
  });

  it('leaves a block the tokenizer failed on plain, without trying it again', async () => {
    let calls = 0;
    const colorizer = new CodeColorizer(
      async () => {
        calls++;
        throw new Error('tokenizer broke');
      },
      () => 'typescript',
    );
    const warn = console.warn;
    console.warn = () => {};
    try {
      await colorizer.request('a', 'ts');
      await colorizer.request('a', 'ts');
    } finally {
      console.warn = warn;
    }
    expect(calls).toBe(1);
    expect(colorizer.lookup('a', 'ts')).toBeNull();
    expect(colorizer.wants('a', 'ts')).toBe(false);
  });
});
