export { StreamingDiff, applyOps } from './streamDiff';
export type { DiffOp, StreamingDiffOptions, StreamingDiffStats } from './streamDiff';
