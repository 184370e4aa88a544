import { until as waitUntil } from '@flint/test-kit';

/** test-kit's `until` with the benches' defaults: a longer deadline, a 2 ms poll (latencies are read off it). */
export function until(condition: () => boolean, what: string, timeoutMs = 30_000, pollMs = 2): Promise<void> {
  return waitUntil(condition, what, { timeoutMs, pollMs });
}

/** Resolves after `ms`: only for pacing a load (keystrokes, idle windows), never to wait for a result. */
export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
