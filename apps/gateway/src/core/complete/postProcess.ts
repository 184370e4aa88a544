/**
 * The last pass over a suggestion before it is shown, once the model stopped (the boundary was
 * already cut by CompletionCutter). Every rule only shortens the text, so the result is a prefix
 * of what streamed ([P26]):
 *
 * 1. A closer the suggestion does not open itself (it closes a bracket or string from before the
 *    cursor) ends the suggestion when the text after the cursor already has that closer there —
 *    on the cursor line for a closer on the suggestion's first line, or on the next line of the
 *    file at the same indent for a closer on its own line.
 * 2. A tail of the suggestion that repeats the start of the rest of the cursor line is dropped
 *    (at token boundaries, and never a closer the kept text opened).
 * 3. Trailing whitespace goes when nothing follows on the cursor line.
 * 4. Whitespace-only suggestions are no suggestion.
 */
import type { SuggestionShape } from './completionPrompt';

const closerOf: Record<string, string> = { '(': ')', '[': ']', '{': '}' };
const openerOf: Record<string, string> = { ')': '(', ']': '[', '}': '{' };
const quotes = `'"\``;
const isWord = (c: string | undefined) => c !== undefined && /[\w$]/.test(c);

export function postProcess(raw: string, shape: SuggestionShape): string {
  let text = cutAtClosedCloser(raw, shape);
  text = dropSuffixOverlap(text, shape.lineSuffix);
  if (shape.lineSuffix.trim() === '') text = text.trimEnd();
  return text.trim() === '' ? '' : text;
}

/** The quote of a string still open at the end of `linePrefix`, if any. */
export function openQuoteAt(linePrefix: string): string | null {
  let quote: string | null = null;
  for (let i = 0; i < linePrefix.length; i++) {
    const c = linePrefix[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (quotes.includes(c)) quote = c;
    // A comment: apostrophes there open nothing.
    else if ((c === '/' && linePrefix[i + 1] === '/') || (c === '#' && (i === 0 || /\s/.test(linePrefix[i - 1]!)))) break;
  }
  return quote;
}

/**
 * Where the first closer of `text` that it did not open is (a bracket, or the quote ending a
 * string opened before the cursor), or -1.
 */
export function firstForeignCloser(text: string, openQuote: string | null): number {
  const stack: string[] = [];
  let quote = openQuote;
  let quoteFromBefore = openQuote !== null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) {
        if (quoteFromBefore) return i;
        quote = null;
      } else if (c === '\n' && quote !== '`') quote = null;
      continue;
    }
    if (quotes.includes(c)) {
      quote = c;
      quoteFromBefore = false;
    } else if (c in closerOf) stack.push(c);
    else if (c in openerOf) {
      if (stack.at(-1) !== openerOf[c]) return i;
      stack.pop();
    }
  }
  return -1;
}

function cutAtClosedCloser(text: string, shape: SuggestionShape): string {
  const at = firstForeignCloser(text, openQuoteAt(shape.linePrefix));
  if (at === -1) return text;
  const closer = text[at]!;
  const lineStart = text.lastIndexOf('\n', at - 1) + 1;
  if (lineStart === 0) {
    // On the cursor line: the rest of the line must continue with this closer.
    return shape.lineSuffix.trimStart().startsWith(closer) ? text.slice(0, at) : text;
  }
  // On a later line: the file's next line must start with it, at the same indent.
  const line = text.slice(lineStart, at);
  if (line.trim() !== '' || !shape.nextSuffixLine.startsWith(closer)) return text;
  const suffixIndent = shape.nextSuffixOnCursorLine ? shape.baseIndent : nextLineIndent(shape);
  return line.length === suffixIndent ? text.slice(0, at) : text;
}

function nextLineIndent(shape: SuggestionShape): number {
  for (const line of shape.suffix.slice(shape.lineSuffix.length + 1).split('\n')) {
    if (line.trim() !== '') return /^[ \t]*/.exec(line)![0].length;
  }
  return -1;
}

/** Drops the longest tail of the last line that the rest of the cursor line starts with. */
function dropSuffixOverlap(text: string, lineSuffix: string): string {
  const rest = lineSuffix.trimEnd();
  if (rest === '') return text;
  const lastLine = text.length - (text.lastIndexOf('\n') + 1);
  for (let k = Math.min(lastLine, rest.length); k >= 1; k--) {
    const tail = text.slice(text.length - k);
    if (tail !== rest.slice(0, k)) continue;
    const kept = text.slice(0, text.length - k);
    if (isWord(tail[0]) && isWord(kept.at(-1))) continue; // mid-identifier: `length` / `h > 0`
    if (isWord(tail.at(-1)) && isWord(rest[k])) continue;
    if (closesKeptOpener(kept, tail)) continue;
    return kept;
  }
  return text;
}

/** Whether `tail` closes a bracket that `kept` opened (dropping it would unbalance the suggestion). */
function closesKeptOpener(kept: string, tail: string): boolean {
  const stack: string[] = [];
  for (const c of kept) {
    if (c in closerOf) stack.push(c);
    else if (c in openerOf && stack.at(-1) === openerOf[c]) stack.pop();
  }
  for (const c of tail) {
    if (c in closerOf) stack.push(`tail${c}`);
    else if (c in openerOf) {
      const top = stack.pop();
      if (top === openerOf[c]) return true;
    }
  }
  return false;
}
