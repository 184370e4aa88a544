/** Waits for a condition by polling (a guard with a deadline, not a sleep that hopes). */
export async function until(condition: () => boolean, what: string, timeoutMs = 30_000, pollMs = 2): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** Resolves after `ms`: only for pacing a load (keystrokes, idle windows), never to wait for a result. */
export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
