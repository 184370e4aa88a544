/** A seeded PRNG (mulberry32) so property tests replay exactly from a printed seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Seed and iteration count from SEED / ITERATIONS, so a failure can be replayed. */
export function propertyConfig(defaultIterations: number): { seed: number; iterations: number } {
  // A fixed default keeps CI deterministic; set SEED to explore other cases.
  const seed = process.env.SEED ? Number(process.env.SEED) : 20261129;
  const iterations = process.env.ITERATIONS ? Number(process.env.ITERATIONS) : defaultIterations;
  return { seed, iterations };
}

/**
 * A seeded stand-in for the gateway's `Random` port (ids, tokens, integers), so a test that makes
 * workspaces, links and turns replays them exactly. Ids keep the real shape (prefix + 12 URL-safe
 * characters) and never repeat within one source; not for secrets.
 */
export function seededRandomSource(seed: number): { id(prefix: string): string; token(): string; int(min: number, max: number): number } {
  const next = seededRandom(seed);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const chars = (count: number) => Array.from({ length: count }, () => alphabet[Math.floor(next() * 64)]).join('');
  const seen = new Set<string>();
  return {
    id(prefix) {
      let id: string;
      do id = `${prefix}${chars(12)}`;
      while (seen.has(id));
      seen.add(id);
      return id;
    },
    token: () => chars(24),
    int: (min, max) => min + Math.floor(next() * (max - min)),
  };
}
