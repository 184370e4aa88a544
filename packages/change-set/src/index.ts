export { deleteRanges, idRunsOf, indexOf, liveRanges, splitRuns, type IdRun, type TextRange } from './idRanges';
export { endWriting, HUNKS_KEY, hunksOf, insertedRuns, isHunkRecord, isRelativePositionJson, reviewHunks, textWithRejected, viewHunks, type HunkRecord, type HunkStatus, type HunkView, type ReviewAction } from './hunks';
