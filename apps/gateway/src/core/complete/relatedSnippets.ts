/**
 * Code from other open files that may help complete at the cursor: lines of those files that
 * mention the identifiers written near the cursor, definitions of those identifiers first. Cheap
 * enough to run at every keystroke (a scan of a few open files), deterministic, and bounded by a
 * character budget.
 */
import type { FimSnippet } from './fimTemplates';

export interface OpenFile {
  path: string;
  text: string;
}

export interface SnippetOptions {
  /** Text around the cursor: the end of the prefix and the start of the suffix. */
  before: string;
  after: string;
  files: readonly OpenFile[];
  budgetChars: number;
  maxWindows?: number;
  /** Lines of each file that are looked at (the top of a file holds its exports). */
  maxLinesPerFile?: number;
}

const identifier = /[A-Za-z_$][\w$]*/g;
const definition = /^\s*(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?(?:function\*?|class|interface|type|enum|const|let|var|def|struct|trait|fn|func)\s+([A-Za-z_$][\w$]*)/;

/** Words too common to say anything about which code is related. */
const stopWords = new Set(
  `abstract and any as async await boolean break case catch class const continue def default delete do elif else enum export
  extends false finally for from function get if implements import in instanceof interface is let new none not null number
  object of or package pass private protected public readonly return self set static string super switch this throw true try
  type typeof undefined var void while with yield None True False lambda print len str int float dict list tuple`.split(/\s+/),
);

/** Identifiers near the cursor, weighted: the closer to the cursor, the heavier (1 to 2). */
export function identifiersNearCursor(before: string, after: string): Map<string, number> {
  const weights = new Map<string, number>();
  const add = (word: string, weight: number) => {
    if (word.length < 3 || stopWords.has(word)) return;
    weights.set(word, Math.max(weights.get(word) ?? 0, weight));
  };
  for (const match of before.matchAll(identifier)) add(match[0], 1 + (match.index + match[0].length) / Math.max(1, before.length));
  for (const match of after.matchAll(identifier)) add(match[0], 1 + 0.5 * (1 - match.index / Math.max(1, after.length)));
  // The word being typed is a prefix of what is wanted, not a name to look up.
  const typing = /[A-Za-z_$][\w$]*$/.exec(before)?.[0];
  if (typing) weights.delete(typing);
  return weights;
}

interface Candidate {
  file: number;
  line: number;
  score: number;
  isDefinition: boolean;
}

export function relatedSnippets(options: SnippetOptions): FimSnippet[] {
  const { files, budgetChars } = options;
  if (budgetChars <= 0 || files.length === 0) return [];
  const weights = identifiersNearCursor(options.before, options.after);
  if (weights.size === 0) return [];
  const maxLines = options.maxLinesPerFile ?? 4000;
  const fileLines = files.map((f) => f.text.split('\n', maxLines));
  const candidates: Candidate[] = [];
  fileLines.forEach((lines, file) => {
    lines.forEach((text, line) => {
      if (text.length > 400) return; // minified or generated: no help, and it would eat the budget
      let score = 0;
      const seen = new Set<string>();
      for (const match of text.matchAll(identifier)) {
        const word = match[0];
        if (seen.has(word)) continue;
        seen.add(word);
        score += weights.get(word) ?? 0;
      }
      const defined = definition.exec(text)?.[1];
      const isDefinition = defined !== undefined && weights.has(defined);
      if (isDefinition) score += 2 + 2 * weights.get(defined)!;
      if (score > 0) candidates.push({ file, line, score, isDefinition });
    });
  });
  candidates.sort((a, b) => b.score - a.score || a.file - b.file || a.line - b.line);

  const chosen = new Map<number, Array<[number, number]>>();
  let used = 0;
  let windows = 0;
  for (const c of candidates) {
    if (windows >= (options.maxWindows ?? 8)) break;
    const lines = fileLines[c.file]!;
    // A definition: its signature and the start of its body. A use: the line and its neighbours.
    const from = c.isDefinition ? c.line : Math.max(0, c.line - 1);
    let to = Math.min(lines.length, c.isDefinition ? c.line + 6 : c.line + 2);
    // A blank line ends a definition (or a group of lines) in most code.
    for (let i = c.line + 1; i < to; i++) if (lines[i]!.trim() === '') to = i;
    const ranges = chosen.get(c.file) ?? [];
    if (ranges.some(([a, b]) => from < b && a < to)) continue;
    const size = lines.slice(from, to).join('\n').length + 1;
    if (used + size > budgetChars) continue;
    used += size;
    windows++;
    ranges.push([from, to]);
    chosen.set(c.file, ranges);
  }
  const snippets: FimSnippet[] = [];
  files.forEach((file, index) => {
    const ranges = chosen.get(index);
    if (!ranges) return;
    ranges.sort((a, b) => a[0] - b[0]);
    const text = ranges.map(([a, b]) => fileLines[index]!.slice(a, b).join('\n')).join('\n...\n');
    snippets.push({ path: file.path, text });
  });
  return snippets;
}
