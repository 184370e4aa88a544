/** Percentiles and summaries of samples (milliseconds, microseconds: whatever the caller measured). */

export interface Summary {
  n: number;
  mean: number;
  min: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/**
 * The nearest-rank percentile of `values` (p in 0..100). Nearest rank, not interpolation: a
 * p99 of 100 samples is the second largest one, a value that really happened.
 */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = isSorted(values) ? values : [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1]!;
}

export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  const mean = n === 0 ? Number.NaN : sorted.reduce((sum, v) => sum + v, 0) / n;
  return {
    n,
    mean,
    min: n === 0 ? Number.NaN : sorted[0]!,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: n === 0 ? Number.NaN : sorted[n - 1]!,
  };
}

/** The median of a few runs (cold starts, repeated CPU measurements). */
export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Successive differences of increasing timestamps: the gaps a reader waited. */
export function gapsOf(timestamps: readonly number[]): number[] {
  const gaps: number[] = [];
  for (let i = 1; i < timestamps.length; i++) gaps.push(timestamps[i]! - timestamps[i - 1]!);
  return gaps;
}

function isSorted(values: readonly number[]): boolean {
  for (let i = 1; i < values.length; i++) if (values[i]! < values[i - 1]!) return false;
  return true;
}
