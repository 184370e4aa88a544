/**
 * What to ask the model for a completion at the cursor, and what shape the answer may take:
 * the prefix and suffix windows around the cursor (within a token budget, their edges on line
 * boundaries and the prefix's start stable while the user types, so provider prompt caches
 * hit), snippets of other open files, and whether one line or a block is wanted.
 */
import type { FimPrompt } from './fimTemplates';
import { relatedSnippets, type OpenFile } from './relatedSnippets';

/** Code runs about 3.5 characters per token in the tokenizers of code models. */
export const charsPerToken = 3.5;

/** How the suggestion may end; the cutter and the post-processing read it. */
export interface SuggestionShape {
  /** The cursor is mid-line: only the rest of this line is wanted. */
  singleLine: boolean;
  /** The cursor line up to the cursor. */
  linePrefix: string;
  /** The cursor line after the cursor. */
  lineSuffix: string;
  /** Indentation (characters) of the cursor line: a block suggestion ends where code dedents past it. */
  baseIndent: number;
  /** The first non-blank line after the cursor, trimmed: a suggestion line equal to it repeats the file. */
  nextSuffixLine: string;
  /** Whether `nextSuffixLine` is the rest of the cursor line itself. */
  nextSuffixOnCursorLine: boolean;
  /** The suffix window, for "the suffix already closes this" checks. */
  suffix: string;
  maxLines: number;
}

export interface CompletionContext {
  prompt: FimPrompt;
  shape: SuggestionShape;
}

export interface CompletionPromptInput {
  path: string;
  text: string;
  cursor: number;
  /** Other open files (the current one excluded). */
  openFiles: readonly OpenFile[];
  /** The prompt's budget in tokens: about 65% prefix, 20% suffix, 15% snippets. */
  promptTokens: number;
  maxLines: number;
}

/** Block openers after which a suggestion may span lines even with closers after the cursor (`{|}`). */
const blockOpener = /[{[]\s*$/;
/** What an editor auto-inserts after the cursor: closers, quotes, `;` and `,`. */
const onlyClosers = /^[\s)\]}'"`;,]*$/;
/** The prefix window's start moves in steps of this many characters, so it stays put while typing. */
const prefixStepChars = 512;

export function buildCompletionContext(input: CompletionPromptInput): CompletionContext {
  const { text, cursor } = input;
  const budgetChars = input.promptTokens * charsPerToken;
  const prefixChars = Math.floor(budgetChars * 0.65);
  const suffixChars = Math.floor(budgetChars * 0.2);

  let start = Math.max(0, cursor - prefixChars);
  if (start > 0) {
    start = Math.min(cursor, Math.ceil(start / prefixStepChars) * prefixStepChars);
    const newline = text.indexOf('\n', start - 1);
    start = newline === -1 || newline >= cursor ? start : newline + 1;
  }
  let end = Math.min(text.length, cursor + suffixChars);
  if (end < text.length) {
    const newline = text.lastIndexOf('\n', end);
    if (newline > cursor) end = newline;
  }
  const prefix = text.slice(start, cursor);
  const suffix = text.slice(cursor, end);

  const lineStart = text.lastIndexOf('\n', cursor - 1) + 1;
  const lineEndAt = text.indexOf('\n', cursor);
  const lineEnd = lineEndAt === -1 ? text.length : lineEndAt;
  const linePrefix = text.slice(lineStart, cursor);
  const lineSuffix = text.slice(cursor, lineEnd);
  const multiLine = lineSuffix.trim() === '' || (onlyClosers.test(lineSuffix) && blockOpener.test(linePrefix));
  const baseIndent = /^[ \t]*/.exec(linePrefix + lineSuffix)![0].length;

  let nextSuffixLine = lineSuffix.trim();
  const nextSuffixOnCursorLine = nextSuffixLine !== '';
  if (!nextSuffixOnCursorLine) {
    for (const line of suffix.slice(lineSuffix.length + 1).split('\n')) {
      if (line.trim() === '') continue;
      nextSuffixLine = line.trim();
      break;
    }
  }

  const snippetChars = Math.floor(budgetChars * 0.15);
  const snippets = relatedSnippets({
    before: prefix.slice(-1500),
    after: suffix.slice(0, 300),
    files: input.openFiles,
    budgetChars: snippetChars,
  });
  return {
    prompt: { path: input.path, prefix, suffix, snippets, singleLine: !multiLine },
    shape: {
      singleLine: !multiLine,
      linePrefix,
      lineSuffix,
      baseIndent,
      nextSuffixLine,
      nextSuffixOnCursorLine,
      suffix,
      maxLines: multiLine ? input.maxLines : 1,
    },
  };
}
