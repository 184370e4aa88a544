/**
 * Randomness, injected like time: every id and token the gateway makes is drawn from it, so a
 * test can seed it (test-kit's `seededRandomSource`) and replay. The real one is `systemRandom`.
 */
export interface Random {
  /** A random id (72 bits, URL-safe) for a workspace, file, link or turn: a name, not a secret. */
  id(prefix: string): string;
  /** A secret (144 bits, URL-safe): a link's token. */
  token(): string;
  /** An integer in [min, max). */
  int(min: number, max: number): number;
}
