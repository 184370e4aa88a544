// Monaco ships no types for its internal modules; the one function Flint uses from its errors.

declare module 'monaco-editor/base/common/errors' {
  /** Monaco's CancellationError (name and message "Canceled"), from any copy of its code. */
  export function isCancellationError(error: unknown): boolean;
}
