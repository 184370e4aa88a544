/** A line range of the model, first and last included. */
export interface LineSpan {
  first: number;
  last: number;
}

/** Overlapping or adjacent line spans merged into as few spans as cover the same lines, in order. */
export function mergeSpans(spans: readonly LineSpan[]): LineSpan[] {
  const sorted = [...spans].sort((a, b) => a.first - b.first);
  const out: LineSpan[] = [];
  for (const span of sorted) {
    const last = out[out.length - 1];
    if (last && span.first <= last.last + 1) last.last = Math.max(last.last, span.last);
    else out.push({ ...span });
  }
  return out;
}
