import type { Aligner } from './align';
import * as costs from './costs';

const { C_DEL, C_GAP, DEL, KEEP } = costs;

/**
 * After the last row (`n`) is computed: the optimal path to its cheapest cell, and the index on
 * that path of the deepest node which every last-row cell within `beam` of the optimum also
 * descends from. Nodes up to there are what all near-optimal alignments agree on ([D6]).
 */
export function commonPrefix(al: Aligner, n: number, beam: number): { path: number[]; common: number } {
  const width = al.width;
  let best = Infinity;
  let bestKey = -1;
  for (let j = 0; j <= width; j++) {
    for (let s = KEEP; s <= DEL; s++) {
      if (al.costAt(s, j) < best) [best, bestKey] = [al.costAt(s, j), al.key(n, j, s)];
    }
  }
  const path = al.trace(bestKey);
  const onPath = new Map<number, number>();
  path.forEach((key, x) => onPath.set(key, x));
  const merged = new Map<number, number>();
  const hits = new Int32Array(3 * (width + 1));
  let common = path.length - 1;
  for (let j = 0; j <= width && common > 0; j++) {
    for (let s = KEEP; s <= DEL; s++) {
      if (al.costAt(s, j) > best + beam) continue;
      const key = al.key(n, j, s);
      const pred = al.pred(key);
      // Costs never fall along a path, so a live delete's left neighbour is live and resolved.
      const hit = onPath.get(key) ?? (s === DEL && j > 0 ? hits[pred - al.key(n, 0, 0)]! : joinIndex(al, key, onPath, merged));
      hits[j * 3 + s] = hit;
      common = Math.min(common, hit);
    }
  }
  return { path, common };
}

/** Index of the path node where the optimal path to `key` joins it; memoised in `merged`. */
function joinIndex(al: Aligner, key: number, onPath: Map<number, number>, merged: Map<number, number>): number {
  const trail: number[] = [];
  let hit = merged.get(key);
  while (hit === undefined) {
    trail.push(key);
    key = al.pred(key);
    hit = onPath.get(key) ?? merged.get(key);
  }
  al.traced += trail.length;
  for (const k of trail) merged.set(k, hit);
  return hit;
}

/** The optimal complete alignment of row `n`: its end pays for deleting the rest of the original. */
export function finalPath(al: Aligner, n: number, rest: number): number[] {
  let best = Infinity;
  let bestKey = -1;
  for (let j = 0; j <= al.width; j++) {
    const left = rest - al.consumed(j);
    for (let s = KEEP; s <= DEL; s++) {
      const c = al.costAt(s, j) + (left === 0 ? 0 : left * C_DEL + (s === DEL ? 0 : C_GAP));
      if (c < best) [best, bestKey] = [c, al.key(n, j, s)];
    }
  }
  return al.trace(bestKey);
}
