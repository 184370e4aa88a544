import { RE2JS } from 're2js';

/**
 * The search panel's include/exclude globs, as VS Code reads them: a comma-separated list; `*`
 * within a segment, `**` across segments, `?` one character, `{a,b}` alternatives; a glob
 * without `/` matches a file or folder name at any depth; a folder matches everything in it.
 * Compiled with RE2, like the search itself, so a hostile glob costs linear time in the path.
 */
export type PathFilter = (path: string) => boolean;

function globToRegex(glob: string): string {
  let out = '';
  let braces = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') {
      if (glob[i + 1] === '*') {
        i++;
        if (glob[i + 1] === '/') {
          i++;
          out += '(?:.*/)?';
        } else out += '.*';
      } else out += '[^/]*';
    } else if (c === '?') out += '[^/]';
    else if (c === '{') {
      braces++;
      out += '(?:';
    } else if (c === '}' && braces > 0) {
      braces--;
      out += ')';
    } else if (c === ',' && braces > 0) out += '|';
    else out += RE2JS.quote(c);
  }
  return out + ')'.repeat(braces);
}

/** Splits on commas outside braces. */
function splitGlobs(list: string): string[] {
  const globs: string[] = [];
  let depth = 0;
  let current = '';
  for (const c of list) {
    if (c === '{') depth++;
    if (c === '}' && depth > 0) depth--;
    if (c === ',' && depth === 0) {
      globs.push(current);
      current = '';
    } else current += c;
  }
  globs.push(current);
  return globs.map((glob) => glob.trim().replace(/^\.\//, '').replace(/\/+$/, '')).filter(Boolean);
}

/** Null when the list is empty; otherwise whether a path (or a folder above it) matches one glob. */
export function compileGlobs(list: string): PathFilter | null {
  const globs = splitGlobs(list);
  if (globs.length === 0) return null;
  const alternatives = globs.map((glob) => (glob.includes('/') ? '' : '(?:.*/)?') + globToRegex(glob));
  const pattern = RE2JS.compile(`^(?:${alternatives.join('|')})(?:/.*)?$`);
  return (path) => pattern.matches(path);
}
