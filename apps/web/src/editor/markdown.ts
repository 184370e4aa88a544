import MarkdownIt, { type Token } from 'markdown-it';

/**
 * Coloured HTML for a finished code block, or null when there is none yet (the caller colours
 * it later and renders again). Must return markup it made itself from `code`, escaped.
 */
export type CodeHighlighter = (code: string, language: string) => string | null;

/** Whether inline code names a workspace file (`src/a.ts`, or `src/a.ts:12` with a line). */
export type PathLookup = (path: string) => boolean;

export interface MarkdownOptions {
  highlight?: CodeHighlighter;
  isPath?: PathLookup;
}

type RenderEnv = {
  lines: string[];
  highlight: CodeHighlighter | null;
  isPath: PathLookup | null;
};

/**
 * The model's answers as Markdown. Nothing in them is trusted: raw HTML is shown as text
 * (`html: false`), links and images may only point at http(s) (a `javascript:` link stays
 * the text it was written as), and links open in a new tab without a referrer.
 */
const md = new MarkdownIt({ html: false, linkify: true, typographer: false });
md.validateLink = (url) => /^https?:\/\//i.test(url.trim());

md.renderer.rules.link_open = (tokens, idx, options, _env, self) => {
  const token = tokens[idx]!;
  token.attrSet('target', '_blank');
  token.attrSet('rel', 'noopener noreferrer nofollow');
  return self.renderToken(tokens, idx, options);
};

// The page's Content-Security-Policy loads no outside images; an image is shown as its link.
md.renderer.rules.image = (tokens, idx) => {
  const token = tokens[idx]!;
  const src = md.utils.escapeHtml(String(token.attrGet('src') ?? ''));
  const alt = md.utils.escapeHtml(token.content || 'image');
  return `<a href="${src}" target="_blank" rel="noopener noreferrer nofollow">🖼 ${alt}</a>`;
};

md.renderer.rules.fence = (tokens, idx, _options, renderEnv) => {
  const token = tokens[idx]!;
  const env = renderEnv as RenderEnv;
  const language = fenceLanguage(token.info);
  // A fence still streaming grows every frame: colouring it would start over each time.
  const colored = language && env.highlight && isClosed(token, env.lines) ? env.highlight(token.content, language) : null;
  const label = language ? `<span class="md-code-lang">${md.utils.escapeHtml(language)}</span>` : '';
  const langAttr = language ? ` data-lang="${md.utils.escapeHtml(language)}"` : '';
  const langClass = language ? ` class="language-${md.utils.escapeHtml(language)}"` : '';
  const body = colored ?? `<pre><code${langClass}>${md.utils.escapeHtml(token.content)}</code></pre>`;
  return `<div class="md-code${colored ? ' md-code--colored' : ''}"${langAttr}>${label}${body}</div>\n`;
};

// Inline code that names a workspace file becomes a button-like span (the panel opens it on click).
md.renderer.rules.code_inline = (tokens, idx, _options, renderEnv) => {
  const content = tokens[idx]!.content;
  const env = renderEnv as RenderEnv;
  const match = /^(.+?)(?::(\d+))?$/.exec(content);
  const path = match?.[1];
  if (path !== undefined && env.isPath?.(path)) {
    const line = match?.[2] ? ` data-line="${match[2]}"` : '';
    return `<code class="md-path" data-path="${md.utils.escapeHtml(path)}"${line} role="link" tabindex="0">${md.utils.escapeHtml(content)}</code>`;
  }
  return `<code>${md.utils.escapeHtml(content)}</code>`;
};

/** The language a fence names: the first word of its info string ("ts", "tsx title=x"). */
export function fenceLanguage(info: string): string {
  return info.trim().split(/\s+/)[0]?.toLowerCase() ?? '';
}

/** Whether a fence token has its closing marker: an unclosed one runs to the end of the text. */
function isClosed(token: Token, lines: readonly string[]): boolean {
  const map = token.map;
  if (!map || map[1] - 1 <= map[0]) return false;
  const last = (lines[map[1] - 1] ?? '').replace(/^[\s>]*/, '').trimEnd();
  const marker = token.markup[0] ?? '`';
  return last.length >= token.markup.length && [...last].every((ch) => ch === marker);
}

/**
 * Renders Markdown to HTML that is safe to put in the page. `highlight` colours code blocks
 * whose fence is closed and that name a language; `isPath` marks inline code naming a file.
 */
export function renderMarkdown(source: string, options: MarkdownOptions = {}): string {
  const env: RenderEnv = { lines: source.split('\n'), highlight: options.highlight ?? null, isPath: options.isPath ?? null };
  return md.render(source, env);
}

/**
 * Splits Markdown into top-level blocks at blank lines outside code fences, so a streaming answer
 * re-renders only its last block: the ones before it no longer change. Joining the blocks gives
 * the text back. (A loose list becomes one list per item; an ordered one keeps its numbers.)
 */
export function splitBlocks(source: string): string[] {
  const blocks: string[] = [];
  let start = 0;
  let fence: string | null = null;
  let at = 0;
  while (at < source.length) {
    const lineEnd = source.indexOf('\n', at);
    const end = lineEnd === -1 ? source.length : lineEnd + 1;
    const line = source.slice(at, end);
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === null && marker) fence = marker;
    else if (fence !== null && marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = null;
    else if (fence === null && line.trim() === '' && lineEnd !== -1 && at > start) {
      blocks.push(source.slice(start, end));
      start = end;
    }
    at = end;
  }
  if (start < source.length) blocks.push(source.slice(start));
  return blocks;
}
