/**
 * How sure a difference of two medians is: a seeded percentile bootstrap. Two arms of one run
 * differ by a few tens of microseconds at most, and a median moves that much between runs of the
 * same code; resampling each arm's samples says whether the difference in this run is more than
 * its own samples' spread.
 */
import { seededRandom } from '@flint/test-kit';
import { percentile } from './percentile';

export interface MedianDifference {
  /** median(a) − median(b). */
  difference: number;
  /** The 2.5th and 97.5th percentiles of the resampled differences. */
  low: number;
  high: number;
}

function resampledMedian(values: readonly number[], random: () => number, scratch: number[]): number {
  for (let i = 0; i < values.length; i++) scratch[i] = values[Math.floor(random() * values.length)]!;
  scratch.sort((x, y) => x - y);
  return percentile(scratch, 50);
}

export function medianDifference(a: readonly number[], b: readonly number[], resamples = 2000, seed = 1): MedianDifference {
  const random = seededRandom(seed);
  const scratchA = new Array<number>(a.length);
  const scratchB = new Array<number>(b.length);
  const differences: number[] = [];
  for (let i = 0; i < resamples; i++) differences.push(resampledMedian(a, random, scratchA) - resampledMedian(b, random, scratchB));
  differences.sort((x, y) => x - y);
  return { difference: percentile(a, 50) - percentile(b, 50), low: percentile(differences, 2.5), high: percentile(differences, 97.5) };
}
