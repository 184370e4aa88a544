/** What `fc.assert` needs to run a property deterministically, and to replay one failure exactly. */
export interface PropertyParameters {
  readonly seed: number;
  readonly numRuns: number;
  /** Set only to replay: the shrunk counterexample's place in fast-check's search. */
  readonly path?: string;
}

/** Fixed so that CI runs the same cases every time; set SEED to explore others. */
const DEFAULT_SEED = 20261129;

/**
 * fast-check parameters for a property test, from the environment: `SEED` (a fixed default
 * otherwise), `SEED_PATH` and `PROPERTY_RUNS` (`defaultRuns` otherwise).
 *
 * A failing property prints the shrunk counterexample and `{ seed: …, path: "…" }`. Replay that
 * case alone, already shrunk, with both values and the test's name:
 *
 * ```
 * SEED=<seed> SEED_PATH='<path>' npx vitest run <file> -t '<test name>'
 * ```
 *
 * @example
 * fc.assert(fc.property(fc.string(), (s) => decode(encode(s)) === s), propertyParameters(300));
 */
export function propertyParameters(defaultRuns: number): PropertyParameters {
  const seed = integerFrom('SEED', process.env.SEED) ?? DEFAULT_SEED;
  const numRuns = integerFrom('PROPERTY_RUNS', process.env.PROPERTY_RUNS) ?? defaultRuns;
  const path = process.env.SEED_PATH || undefined;
  // A path belongs to the seed that found it; with another seed it names some other case.
  if (path !== undefined && process.env.SEED === undefined) {
    throw new Error('SEED_PATH replays a failure only with the SEED it was printed with: set both.');
  }
  return path === undefined ? { seed, numRuns } : { seed, numRuns, path };
}

function integerFrom(name: string, value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed)) throw new Error(`${name} must be an integer, not ${JSON.stringify(value)}.`);
  return parsed;
}
