import type { Aligner } from './align';
import * as costs from './costs';

const { C_DEL, C_GAP, DEL, KEEP } = costs;

/**
 * Node → path index marks for one `commonPrefix` call, in typed arrays stamped with a
 * generation instead of Maps that are built and dropped per settle: this runs once per settle,
 * over every near-optimal cell of the last row, and dominated the profile with Maps.
 */
class Marks {
  private gen = 0;
  private stamp = new Uint32Array(0);
  private value = new Int32Array(0);

  /** Forgets every mark (O(1)); keys up to `size` may be used. */
  clear(size: number): void {
    if (size > this.stamp.length) {
      this.stamp = new Uint32Array(size * 2);
      this.value = new Int32Array(size * 2);
      this.gen = 0;
    }
    if (++this.gen === 0xffffffff) {
      this.stamp.fill(0);
      this.gen = 1;
    }
  }

  get(key: number): number {
    return this.stamp[key] === this.gen ? this.value[key]! : -1;
  }

  set(key: number, index: number): void {
    this.stamp[key] = this.gen;
    this.value[key] = index;
  }
}

const onPath = new Marks();
const merged = new Marks();

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
  const size = al.key(n, width, DEL) + 1;
  onPath.clear(size);
  merged.clear(size);
  path.forEach((key, x) => onPath.set(key, x));
  const hits = new Int32Array(3 * (width + 1));
  let common = path.length - 1;
  for (let j = 0; j <= width && common > 0; j++) {
    for (let s = KEEP; s <= DEL; s++) {
      if (al.costAt(s, j) > best + beam) continue;
      const key = al.key(n, j, s);
      const pred = al.pred(key);
      // Costs never fall along a path, so a live delete's left neighbour is live and resolved.
      const marked = onPath.get(key);
      const hit = marked >= 0 ? marked : s === DEL && j > 0 ? hits[pred - al.key(n, 0, 0)]! : joinIndex(al, key);
      hits[j * 3 + s] = hit;
      common = Math.min(common, hit);
    }
  }
  return { path, common };
}

const trail: number[] = [];

/** Index of the path node where the optimal path to `key` joins it; memoised in `merged`. */
function joinIndex(al: Aligner, key: number): number {
  trail.length = 0;
  let hit = merged.get(key);
  while (hit < 0) {
    trail.push(key);
    key = al.pred(key);
    hit = onPath.get(key);
    if (hit < 0) hit = merged.get(key);
  }
  al.traced += trail.length;
  for (const k of trail) merged.set(k, hit);
  return hit;
}

/**
 * The optimal complete alignment of row `n`: its end pays for deleting the `rest` of the original,
 * or, when `rest` is null (the rest stays, [D19]), its end is free.
 */
export function finalPath(al: Aligner, n: number, rest: number | null): number[] {
  let best = Infinity;
  let bestKey = -1;
  for (let j = 0; j <= al.width; j++) {
    const left = rest === null ? 0 : rest - al.consumed(j);
    for (let s = KEEP; s <= DEL; s++) {
      const c = al.costAt(s, j) + (left === 0 ? 0 : left * C_DEL + (s === DEL ? 0 : C_GAP));
      if (c < best) [best, bestKey] = [c, al.key(n, j, s)];
    }
  }
  return al.trace(bestKey);
}
