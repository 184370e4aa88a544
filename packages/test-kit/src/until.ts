export interface UntilOptions {
  /** Gives up after this long (default 10 s). */
  timeoutMs?: number;
  /** Real time between checks (default 10 ms); ignored when `wait` is given. */
  pollMs?: number;
  /** Runs before every check: flush an in-memory network, say. */
  step?: () => void;
  /** Runs between checks instead of sleeping `pollMs`: move a fake clock, drain a socket. */
  wait?: () => Promise<void>;
  /** Appended to the error: what the world looked like when it gave up. */
  debug?: () => string;
}

/**
 * Waits for `condition` by checking it again and again until a deadline (a guard that fails
 * with a reason, not a sleep that hopes). The one wait-for-a-condition of the tests and benches.
 */
export async function until(condition: () => boolean | Promise<boolean>, what: string, options: UntilOptions = {}): Promise<void> {
  const { timeoutMs = 10_000, pollMs = 10, step, wait, debug } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    step?.();
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${debug ? `\n${debug()}` : ''}`);
    await (wait ? wait() : new Promise((resolve) => setTimeout(resolve, pollMs)));
  }
}
