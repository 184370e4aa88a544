/**
 * Limits on workspace paths ("src/app/main.ts"): no traversal, nothing that would not survive the
 * wire, nothing that displays as something other than what it is.
 */
export const maxPathBytes = 1024;
export const maxPathSegmentChars = 255;

export type PathError =
  | 'empty'
  | 'too_long'
  | 'absolute'
  | 'traversal'
  | 'empty_segment'
  | 'control_character'
  | 'bidi_control'
  | 'lone_surrogate'
  | 'backslash'
  | 'segment_too_long';

/** C0, DEL and C1. */
const controlCharacter = /[\u0000-\u001f\u007f-\u009f]/;
/**
 * Bidirectional marks, embeddings, overrides and isolates: invisible, they make a name display
 * in another order than it is (`evil\u202Eexe.ts` shows as `evilst.exe`), so two names that look
 * alike can be different paths, and a reviewer cannot see what a change touched.
 */
const bidiControl = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
/** With the `u` flag a pair is one code point outside this range: only unpaired halves match. */
const loneSurrogate = /[\ud800-\udfff]/u;

/**
 * The form in which the gateway stores and compares paths: Unicode NFC. `é` typed as one code
 * point and as `e` + a combining accent (as macOS spells file names) are then one path, so a
 * rename or delete finds a file whichever way the client spells its name. Validate the
 * normalized form: it is the one that is stored.
 * @example validatePath(normalizePath(request.path))
 */
export function normalizePath(path: string): string {
  return path.normalize('NFC');
}

/**
 * Checks a workspace path. Paths are `/`-separated, relative, and name no `.` or `..`
 * segment, so no path can point outside the workspace whatever a client sends.
 *
 * An unpaired surrogate is refused because it cannot be encoded: Yjs and every JSON decoder
 * along the way turn it into U+FFFD, so the file's name would differ from the path the gateway
 * stored and could then never be renamed or deleted.
 * @returns null when the path is acceptable.
 */
export function validatePath(path: string): PathError | null {
  if (path.length === 0) return 'empty';
  if (loneSurrogate.test(path)) return 'lone_surrogate';
  if (new TextEncoder().encode(path).length > maxPathBytes) return 'too_long';
  if (path.startsWith('/')) return 'absolute';
  if (controlCharacter.test(path)) return 'control_character';
  if (bidiControl.test(path)) return 'bidi_control';
  if (path.includes('\\')) return 'backslash';
  for (const segment of path.split('/')) {
    if (segment === '') return 'empty_segment';
    if (segment === '.' || segment === '..') return 'traversal';
    if (segment.length > maxPathSegmentChars) return 'segment_too_long';
  }
  return null;
}

/** The sentence a user sees when a path is refused: what is wrong with it. */
export function describePathError(error: PathError): string {
  switch (error) {
    case 'empty':
      return 'A name cannot be empty.';
    case 'too_long':
      return `A path can be at most ${maxPathBytes} bytes.`;
    case 'absolute':
      return 'A path cannot start with "/".';
    case 'traversal':
      return 'A path cannot contain "." or ".." segments.';
    case 'empty_segment':
      return 'A path cannot contain an empty segment ("//" or a trailing "/").';
    case 'control_character':
      return 'A name cannot contain control characters (such as a tab or a line break).';
    case 'bidi_control':
      return 'A name cannot contain invisible text-direction characters (such as U+202E): they make it display differently from what it is.';
    case 'lone_surrogate':
      return 'A name cannot contain half of a character (an unpaired UTF-16 surrogate). Retype the name.';
    case 'backslash':
      return 'A name cannot contain "\\".';
    case 'segment_too_long':
      return `A name can be at most ${maxPathSegmentChars} characters.`;
  }
}

export function parentPath(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash === -1 ? '' : path.slice(0, slash);
}

export function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** Whether `path` is `folder` itself or lies inside it. */
export function isWithin(path: string, folder: string): boolean {
  return path === folder || path.startsWith(folder + '/');
}
