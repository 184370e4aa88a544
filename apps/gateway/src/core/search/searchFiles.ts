import { RE2JS, RE2JSSyntaxException } from 're2js';

/**
 * Search over a workspace's text, for the agent's `search` tool (issue 32) and the IDE's search
 * across files (issue 38): RE2 semantics (RE2JS, linear in the text whatever the pattern), run in
 * slices of bounded work with a yield to I/O between them, within a budget per search. A pattern
 * someone writes must never hold the event loop that every workspace's keystrokes go through
 * (DESIGN §11.6, decision 0027).
 */

/** Where the search's text comes from, and how it yields (the room's clock: `afterIo`). */
export interface SearchSource {
  /** The paths to search, in order. */
  paths: string[];
  read(path: string): string | null;
  afterIo(fn: () => void): void;
  /** Checked between slices: an aborted search stops where it is. */
  signal?: AbortSignal;
}

export interface SearchQuery {
  query: string;
  regex: boolean;
  maxMatches: number;
}

/** How a query reads its pattern: the IDE's toggles (the agent's tool leaves both off). */
export interface PatternOptions {
  query: string;
  regex: boolean;
  matchCase?: boolean;
  wholeWord?: boolean;
}

export type SearchResult =
  | { ok: true; matches: string[]; total: number; stoppedAt: string | null }
  | { ok: false; message: string };

/**
 * Matching costs at most (characters × (program size + a constant)) steps in RE2's NFA; a slice
 * of this many steps is a few milliseconds of RE2JS's slowest matching, well inside a frame.
 */
export const sliceSteps = 200_000;
/** One search may spend this many steps in all (seconds of CPU, spread over thousands of slices). */
export const maxSearchSteps = 400_000_000;
const stepsPerChar = 8;
/** Lines longer than this are searched only in their first part (a minified file's one line). */
const maxLineChars = 2000;
/** Larger programs would leave too little of each line within one slice: refused. */
const maxProgramSize = 2000;
/** A line with more matches than this is reported with the first ones (each find costs a scan). */
const maxRangesPerLine = 100;
const maxShownChars = 300;

/** A compiled query: where it matches in a line, and what a line becomes with a replacement. */
export interface LineMatcher {
  /** Match ranges [start, end) in `line`, at most `maxRangesPerLine`. */
  ranges(line: string): Array<[number, number]>;
  /** `line` with every match replaced (`$1`, `$&` expand for a regex; literal otherwise). */
  replace(line: string, replacement: string): string;
  /** How many characters of each line it reads, and what a character costs. */
  lineChars: number;
  stepsPerChar: number;
}

export type Compiled = ({ ok: true } & LineMatcher) | { ok: false; message: string };

export function compileSearch({ query, regex, matchCase = true, wholeWord = false }: PatternOptions): Compiled {
  if (!regex && matchCase && !wholeWord) return literal(query);
  let pattern: RE2JS;
  const source = regex ? query : RE2JS.quote(query);
  try {
    pattern = RE2JS.compile(wholeWord ? `\\b(?:${source})\\b` : source, matchCase ? 0 : RE2JS.CASE_INSENSITIVE);
  } catch (error) {
    if (!(error instanceof RE2JSSyntaxException)) throw error;
    return { ok: false, message: `The regular expression cannot be used: ${error.message}. ${unsupported(query)}` };
  }
  const size = pattern.programSize();
  if (size > maxProgramSize) {
    return { ok: false, message: `The regular expression is too large to search with (${size} instructions; at most ${maxProgramSize}): use a shorter pattern, fewer or smaller repeat counts.` };
  }
  const cost = size + stepsPerChar;
  return {
    ok: true,
    ranges: (line) => {
      const found: Array<[number, number]> = [];
      const matcher = pattern.matcher(line);
      let from = 0;
      while (found.length < maxRangesPerLine && from <= line.length && matcher.find(from)) {
        const start = matcher.start();
        const end = matcher.end();
        if (end > start) found.push([start, end]);
        from = end > start ? end : end + 1;
      }
      return found;
    },
    replace: (line, replacement) => pattern.matcher(line).replaceAll(regex ? replacement : RE2JS.quoteReplacement(replacement)),
    lineChars: Math.min(maxLineChars, Math.floor(sliceSteps / cost)),
    stepsPerChar: cost,
  };
}

/** Plain text, case and all: no engine needed. */
function literal(query: string): Compiled {
  return {
    ok: true,
    ranges: (line) => {
      const found: Array<[number, number]> = [];
      if (!query) return found;
      for (let at = line.indexOf(query); at >= 0 && found.length < maxRangesPerLine; at = line.indexOf(query, at + query.length)) found.push([at, at + query.length]);
      return found;
    },
    replace: (line, replacement) => (query ? line.split(query).join(replacement) : line),
    lineChars: Infinity,
    stepsPerChar: 1,
  };
}

/** What RE2 syntax leaves out that JavaScript has, named when the pattern uses it. */
function unsupported(query: string): string {
  const base = 'Search uses RE2 syntax, which matches in linear time';
  if (/\\[1-9]|\\k</.test(query)) return `${base}: it has no backreferences (\\1, \\k<name>). Search for the text itself, or a broader pattern.`;
  if (/\(\?<?[=!]/.test(query)) return `${base}: it has no lookahead or lookbehind ((?=, (?!, (?<=, (?<!). Search for a broader pattern.`;
  return `${base} (no backreferences, no lookaround).`;
}

/** One line of one file, as the scan hands it on: `searched` is the part the pattern reads. */
export interface ScannedLine {
  path: string;
  /** 0-based. */
  index: number;
  line: string;
  searched: string;
}

export type ScanEnd = { stoppedAt: string | null; aborted: boolean };

/**
 * Visits every line of every path with the compiled matcher's cost counted, yielding to I/O after
 * each slice of work; stops at the budget (naming the path it stopped at) or when aborted.
 * `visit` returns the extra steps it spent (a replacement rewrites the line: one more pass).
 */
export async function scanLines(source: SearchSource, matcher: LineMatcher, visit: (line: ScannedLine) => number | void, onFileEnd?: (path: string) => void): Promise<ScanEnd> {
  const { lineChars, stepsPerChar: cost } = matcher;
  let steps = 0;
  let sliceStart = 0;
  for (const path of source.paths) {
    if (steps >= maxSearchSteps) return { stoppedAt: path, aborted: false };
    if (source.signal?.aborted) return { stoppedAt: path, aborted: true };
    const text = source.read(path) ?? '';
    // Reading (and splitting) a file costs its length once, whatever the pattern.
    steps += text.length + 1;
    const lines = text.split('\n');
    for (let index = 0; index < lines.length; index++) {
      const line = lines[index]!;
      const searched = line.length > lineChars ? line.slice(0, lineChars) : line;
      steps += (searched.length + 1) * cost;
      steps += visit({ path, index, line, searched }) ?? 0;
      if (steps - sliceStart >= sliceSteps) {
        await new Promise<void>((resume) => source.afterIo(resume));
        sliceStart = steps;
        if (source.signal?.aborted) return { stoppedAt: path, aborted: true };
      }
    }
    onFileEnd?.(path);
  }
  return { stoppedAt: null, aborted: false };
}

/** The agent's search: matching lines as `path:line: text`. */
export async function searchFiles(source: SearchSource, { query, regex, maxMatches }: SearchQuery): Promise<SearchResult> {
  const compiled = compileSearch({ query, regex });
  if (!compiled.ok) return compiled;
  const matches: string[] = [];
  let total = 0;
  const { stoppedAt } = await scanLines(source, compiled, ({ path, index, line, searched }) => {
    if (compiled.ranges(searched).length === 0) return;
    total++;
    if (matches.length < maxMatches) matches.push(`${path}:${index + 1}: ${line.slice(0, maxShownChars)}`);
  });
  return { ok: true, matches, total, stoppedAt };
}
