export { PatchReader } from './PatchReader';
export type { FileKind, PatchErrorCode, PatchEvent } from './PatchReader';
export { locateHunk } from './locateHunk';
export type { LocatableHunk, LocateFailure, LocateResult, MatchLevel } from './locateHunk';
export { collectFileChanges } from './collectFileChanges';
export type { FileChange, HunkChange } from './collectFileChanges';
export { applyPatchToText } from './applyPatchToText';
export type { ApplyResult } from './applyPatchToText';
