import { RE2JS, RE2JSSyntaxException } from 're2js';

/**
 * The agent's `search` tool (issue 32): RE2 semantics (RE2JS, linear in the text whatever the
 * pattern), run in slices of bounded work with a yield to I/O between them, within a budget per
 * search. A pattern the model writes must never hold the event loop that every workspace's
 * keystrokes go through (DESIGN §11.6).
 */

/** Where the search's text comes from, and how it yields (the room's clock: `afterIo`). */
export interface SearchSource {
  /** The paths to search, in order. */
  paths: string[];
  read(path: string): string | null;
  afterIo(fn: () => void): void;
}

export interface SearchQuery {
  query: string;
  regex: boolean;
  maxMatches: number;
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
const maxShownChars = 300;

/** A line test, how many characters of each line it reads, and what a character costs. */
type Compiled = { ok: true; test: (line: string) => boolean; lineChars: number; stepsPerChar: number } | { ok: false; message: string };

function compile(query: string, regex: boolean): Compiled {
  if (!regex) return { ok: true, test: (line) => line.includes(query), lineChars: Infinity, stepsPerChar: 1 };
  let pattern: RE2JS;
  try {
    pattern = RE2JS.compile(query);
  } catch (error) {
    if (!(error instanceof RE2JSSyntaxException)) throw error;
    return { ok: false, message: `The regular expression cannot be used: ${error.message}. ${unsupported(query)}` };
  }
  const size = pattern.programSize();
  if (size > maxProgramSize) {
    return { ok: false, message: `The regular expression is too large to search with (${size} instructions; at most ${maxProgramSize}): use a shorter pattern, fewer or smaller repeat counts.` };
  }
  const cost = size + stepsPerChar;
  return { ok: true, test: (line) => pattern.matcher(line).find(), lineChars: Math.min(maxLineChars, Math.floor(sliceSteps / cost)), stepsPerChar: cost };
}

/** What RE2 syntax leaves out that JavaScript has, named when the pattern uses it. */
function unsupported(query: string): string {
  const base = 'Search uses RE2 syntax, which matches in linear time';
  if (/\\[1-9]|\\k</.test(query)) return `${base}: it has no backreferences (\\1, \\k<name>). Search for the text itself, or a broader pattern.`;
  if (/\(\?<?[=!]/.test(query)) return `${base}: it has no lookahead or lookbehind ((?=, (?!, (?<=, (?<!). Search for a broader pattern.`;
  return `${base} (no backreferences, no lookaround).`;
}

/** Searches every line of every path; yields to I/O after each slice of work. */
export async function searchFiles(source: SearchSource, { query, regex, maxMatches }: SearchQuery): Promise<SearchResult> {
  const compiled = compile(query, regex);
  if (!compiled.ok) return compiled;
  const { test, lineChars, stepsPerChar: cost } = compiled;
  const matches: string[] = [];
  let total = 0;
  let steps = 0;
  let sliceStart = 0;
  for (const path of source.paths) {
    if (steps >= maxSearchSteps) return { ok: true, matches, total, stoppedAt: path };
    const text = source.read(path) ?? '';
    // Reading (and splitting) a file costs its length once, whatever the pattern.
    steps += text.length + 1;
    const lines = text.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      const searched = line.length > lineChars ? line.slice(0, lineChars) : line;
      steps += (searched.length + 1) * cost;
      if (test(searched)) {
        total++;
        if (matches.length < maxMatches) matches.push(`${path}:${i + 1}: ${line.slice(0, maxShownChars)}`);
      }
      if (steps - sliceStart >= sliceSteps) {
        await new Promise<void>((resume) => source.afterIo(resume));
        sliceStart = steps;
      }
    }
  }
  return { ok: true, matches, total, stoppedAt: null };
}
