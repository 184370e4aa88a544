/** Search across files ([P36]–[P38]): a query the gateway runs over every file of the workspace. */

/** Longest pattern, replacement or glob list a search request may carry (UTF-16 code units). */
export const MAX_SEARCH_TEXT = 1000;
/** Most files one replace may name. */
export const MAX_REPLACE_FILES = 1000;

export interface SearchQuery {
  /** The text to find, or an RE2 regular expression with `regex`. */
  pattern: string;
  regex: boolean;
  matchCase: boolean;
  wholeWord: boolean;
  /** Comma-separated globs; empty means every file. A glob without `/` matches at any depth. */
  include: string;
  /** Comma-separated globs of files to leave out. */
  exclude: string;
}

export type SearchRequest =
  /** Finds every match ([P36]); answered by one `search.result`, or `result {ok:false}`. */
  | { type: 'search.run'; requestId: number; query: SearchQuery }
  /** Replaces every match of `query` in these files ([P37]); editors only. */
  | { type: 'search.replace'; requestId: number; query: SearchQuery; replacement: string; fileIds: string[] }
  /** Undoes this session's last replace, in every file it changed, leaving others' edits ([P37]); editors only. */
  | { type: 'search.undo'; requestId: number };

/** One match: 0-based line, its [start, end) in UTF-16 code units, and the line shown from `previewFrom`. */
export interface SearchMatch {
  line: number;
  start: number;
  end: number;
  preview: string;
  previewFrom: number;
}

export interface SearchFileHits {
  path: string;
  fileId: string;
  matches: SearchMatch[];
}

export type SearchAnswer =
  /**
   * `files`: the matches, grouped by file in path order, at most `shownLimit` matches in all;
   * `total`: every match counted, so `total - shown` were cut; `stoppedAt`: the path where the
   * search's budget ran out (the files from there on were not searched), or null.
   */
  | { type: 'search.result'; requestId: number; files: SearchFileHits[]; total: number; shown: number; filesSearched: number; stoppedAt: string | null }
  /** `files`: files changed (one transaction each); `replacements`: matches replaced. */
  | { type: 'search.replaced'; requestId: number; files: number; replacements: number; stoppedAt: string | null };

const isString = (v: unknown): v is string => typeof v === 'string';
const isShort = (v: unknown): v is string => isString(v) && v.length <= MAX_SEARCH_TEXT;

export function isSearchQuery(value: unknown): value is SearchQuery {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const q = value as Record<string, unknown>;
  return (
    isShort(q.pattern) &&
    typeof q.regex === 'boolean' &&
    typeof q.matchCase === 'boolean' &&
    typeof q.wholeWord === 'boolean' &&
    isShort(q.include) &&
    isShort(q.exclude)
  );
}

export const isReplaceFiles = (value: unknown): value is string[] => Array.isArray(value) && value.length <= MAX_REPLACE_FILES && value.every(isString);
export const isReplacement = isShort;
