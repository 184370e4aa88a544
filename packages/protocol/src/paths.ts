/** Limits on workspace paths ("src/app/main.ts"): no traversal, no control characters. */
export const maxPathBytes = 1024;
export const maxPathSegmentChars = 255;

export type PathError =
  | 'empty'
  | 'too_long'
  | 'absolute'
  | 'traversal'
  | 'empty_segment'
  | 'control_character'
  | 'backslash'
  | 'segment_too_long';

const controlCharacter = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Checks a workspace path. Paths are `/`-separated, relative, and name no `.` or `..`
 * segment, so no path can point outside the workspace whatever a client sends.
 * @returns null when the path is acceptable.
 */
export function validatePath(path: string): PathError | null {
  if (path.length === 0) return 'empty';
  if (new TextEncoder().encode(path).length > maxPathBytes) return 'too_long';
  if (path.startsWith('/')) return 'absolute';
  if (controlCharacter.test(path)) return 'control_character';
  if (path.includes('\\')) return 'backslash';
  for (const segment of path.split('/')) {
    if (segment === '') return 'empty_segment';
    if (segment === '.' || segment === '..') return 'traversal';
    if (segment.length > maxPathSegmentChars) return 'segment_too_long';
  }
  return null;
}

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
      return 'A name cannot contain control characters.';
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
