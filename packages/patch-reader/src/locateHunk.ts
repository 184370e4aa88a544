/** How loosely a hunk's lines matched the document's ([R10]), strictest first. */
export type MatchLevel = 'exact' | 'trim_end' | 'trim';

/** What locating needs of a hunk: its old text, as lines, and what narrows where it may be. */
export interface LocatableHunk {
  /** The `@@` line's text: the hunk lies after a line that reads like it ([R11]). */
  readonly header?: string;
  /** The hunk's context and removed lines, in order, without line breaks. */
  readonly oldLines: readonly string[];
  /** Set by `*** End of File`: the old lines end the document ([R12]). */
  readonly endOfFile?: boolean;
}

export type LocateFailure =
  | { readonly ok: false; readonly reason: 'not_found'; readonly what: 'header' | 'lines' }
  | { readonly ok: false; readonly reason: 'ambiguous'; readonly candidateLines: readonly number[] };

export type LocateResult =
  | {
      readonly ok: true;
      /** The old lines' range in the document, in code units, line breaks included. */
      readonly start: number;
      readonly end: number;
      /** 0-based line of `start`, and how many lines the range holds. */
      readonly firstLine: number;
      readonly lineCount: number;
      readonly level: MatchLevel;
    }
  | LocateFailure;

const levels: ReadonlyArray<readonly [MatchLevel, (line: string) => string]> = [
  ['exact', (line) => line],
  ['trim_end', (line) => line.trimEnd()],
  ['trim', (line) => line.trim()],
];

function splitLines(text: string): { lines: string[]; starts: number[] } {
  const lines: string[] = [];
  const starts: number[] = [];
  for (let at = 0; at < text.length; ) {
    const lineBreak = text.indexOf('\n', at);
    const end = lineBreak === -1 ? text.length : lineBreak;
    starts.push(at);
    lines.push(text.slice(at, end));
    at = end + 1;
  }
  return { lines, starts };
}

/** Starts of `pattern` in `lines` from `first` on that `accept` takes, at the first level that finds any. */
function findAll(
  lines: readonly string[],
  pattern: readonly string[],
  first: number,
  accept: (line: number) => boolean = () => true,
): { places: number[]; level: number } | null {
  for (let level = 0; level < levels.length; level += 1) {
    const normal = levels[level]![1];
    const wanted = pattern.map(normal);
    const places: number[] = [];
    for (let i = first; i + wanted.length <= lines.length; i += 1) {
      if (accept(i) && wanted.every((line, k) => normal(lines[i + k]!) === line)) places.push(i);
    }
    if (places.length > 0) return { places, level };
  }
  return null;
}

/**
 * Finds where a hunk's old lines sit in `documentText`, at or after offset `from` (the end of
 * the previous hunk of the same file), by content: exactly once, else a typed failure ([R9]).
 *
 * @example
 * const found = locateHunk(doc, { header: 'function total(items) {', oldLines: ['  let sum = 0;'] });
 * if (found.ok) replace(found.start, found.end, newText);
 */
export function locateHunk(documentText: string, hunk: LocatableHunk, from = 0): LocateResult {
  const { lines, starts } = splitLines(documentText);
  const first = starts.findIndex((start) => start >= from);
  const searchFrom = first === -1 ? lines.length : first;

  let origins = [searchFrom];
  let headerLevel = 0;
  if (hunk.header !== undefined) {
    const headers = findAll(lines, [hunk.header], searchFrom);
    if (headers === null) return { ok: false, reason: 'not_found', what: 'header' };
    origins = headers.places.map((line) => line + 1);
    headerLevel = headers.level;
  }

  const count = hunk.oldLines.length;
  let places: number[];
  let level = headerLevel;
  if (count === 0) {
    // Nothing to match: added lines go right after the header, or else at the end ([R12]).
    places = hunk.header === undefined || hunk.endOfFile ? [lines.length] : origins;
  } else {
    const atEnd = (line: number) => !hunk.endOfFile || line + count === lines.length;
    const found = findAll(lines, hunk.oldLines, origins[0]!, atEnd);
    if (found === null) return { ok: false, reason: 'not_found', what: 'lines' };
    level = Math.max(level, found.level);
    // Under a header, the hunk is the nearest match after some occurrence of it.
    places = hunk.header === undefined ? found.places : origins.flatMap((origin) => found.places.find((line) => line >= origin) ?? []);
  }
  const distinct = [...new Set(places)];
  if (distinct.length > 1) return { ok: false, reason: 'ambiguous', candidateLines: distinct };
  const firstLine = distinct[0]!;
  const lineStart = (line: number) => starts[line] ?? documentText.length;
  return { ok: true, start: lineStart(firstLine), end: lineStart(firstLine + count), firstLine, lineCount: count, level: levels[level]![0] };
}
