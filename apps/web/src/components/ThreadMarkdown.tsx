import { memo, useEffect, useMemo, useState, type KeyboardEvent, type MouseEvent } from 'react';
import { CodeColorizer } from '../editor/CodeColorizer';
import { renderMarkdown, splitBlocks } from '../editor/markdown';
import { monaco } from '../editor/monacoSetup';
import { openThreadFile } from '../stores/threadStore';
import { useWorkspace } from '../stores/workspaceStore';

/** Fence names Monaco does not list among a language's aliases or extensions. */
const fenceAliases: Readonly<Record<string, string | null>> = {
  ts: 'typescript',
  tsx: 'typescript',
  mts: 'typescript',
  js: 'javascript',
  jsx: 'javascript',
  mjs: 'javascript',
  sh: 'shell',
  bash: 'shell',
  zsh: 'shell',
  console: 'shell',
  py: 'python',
  yml: 'yaml',
  md: 'markdown',
  text: null,
  txt: null,
  plaintext: null,
};

function monacoLanguage(fence: string): string | null {
  const alias = fenceAliases[fence];
  if (alias !== undefined) return alias;
  const language = monaco.languages
    .getLanguages()
    .find((l) => l.id === fence || l.aliases?.some((a) => a.toLowerCase() === fence) || l.extensions?.includes(`.${fence}`));
  return language?.id ?? null;
}

/**
 * One colourer for every answer: the cache is shared, so a block quoted twice is coloured once.
 * Monaco gives lines of spans joined by <br>; a block's last newline would be an empty line.
 */
const colorizer = new CodeColorizer(
  async (code, languageId) => `<div class="md-code-body">${await monaco.editor.colorize(code.replace(/\n$/, ''), languageId, { tabSize: 2 })}</div>`,
  monacoLanguage,
);

/** Opens a file named in inline code (`src/a.ts:12`), by click or Enter. */
function openPathAt(target: EventTarget): boolean {
  const element = (target as HTMLElement).closest?.<HTMLElement>('code.md-path');
  const path = element?.dataset.path;
  if (!element || path === undefined) return false;
  openThreadFile({ path }, Number(element.dataset.line ?? 1));
  return true;
}

/**
 * The model's answer as Markdown, block by block: as it streams, only its last block changes, so
 * only that one is parsed and put in the page again (the others keep their DOM, and a selection
 * in them). Code blocks whose fence has closed are coloured by Monaco off the render and shown
 * coloured from the cache on the next one.
 */
export const ThreadMarkdown = memo(function ThreadMarkdown({ text }: { text: string }) {
  const blocks = useMemo(() => splitBlocks(text), [text]);
  const onClick = (event: MouseEvent) => {
    if (openPathAt(event.target)) event.preventDefault();
  };
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === 'Enter' && openPathAt(event.target)) event.preventDefault();
  };
  return (
    <div className="thread-md" onClick={onClick} onKeyDown={onKeyDown}>
      {blocks.map((block, i) => (
        <MarkdownBlock key={i} text={block} />
      ))}
    </div>
  );
});

const MarkdownBlock = memo(function MarkdownBlock({ text }: { text: string }) {
  const entries = useWorkspace((s) => s.entries);
  const [colored, setColored] = useState(0);
  const rendered = useMemo(() => {
    const missing: Array<[string, string]> = [];
    const html = renderMarkdown(text, {
      highlight: (code, language) => {
        const hit = colorizer.lookup(code, language);
        if (hit === null && colorizer.wants(code, language)) missing.push([code, language]);
        return hit;
      },
      isPath: (path) => entries.get(path)?.kind === 'file',
    });
    return { html, missing };
    // `colored` is a version: a block finished colouring, so the same text renders differently.
  }, [text, entries, colored]);

  useEffect(() => {
    if (rendered.missing.length === 0) return;
    let live = true;
    void Promise.all(rendered.missing.map(([code, language]) => colorizer.request(code, language))).then(() => {
      if (live) setColored((version) => version + 1);
    });
    return () => {
      live = false;
    };
  }, [rendered]);

  return <div className="thread-md-block" dangerouslySetInnerHTML={{ __html: rendered.html }} />;
});
