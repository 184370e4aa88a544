/** The timers a debounce runs on: the page's, or a test's fake ones. */
export interface DebounceTimers {
  setTimeout(run: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  now(): number;
}

const pageTimers: DebounceTimers = {
  setTimeout: (run, ms) => setTimeout(run, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  now: () => Date.now(),
};

export interface Debounced {
  /** Asks for a run `waitMs` after the last ask, and no later than `maxWaitMs` after the first. */
  schedule(): void;
  /** Runs now if a run was asked for. */
  flush(): void;
  cancel(): void;
  readonly pending: boolean;
}

/**
 * Runs `run` once things have been quiet for `waitMs`. `maxWaitMs` bounds the wait while asks
 * keep coming (a peer typing, the agent streaming into a file), so a run still happens now and
 * then instead of never.
 */
export function debounce(run: () => void, waitMs: number, maxWaitMs = Number.POSITIVE_INFINITY, timers: DebounceTimers = pageTimers): Debounced {
  let timer: unknown = null;
  let firstAskAt: number | null = null;

  const clear = () => {
    if (timer !== null) timers.clearTimeout(timer);
    timer = null;
    firstAskAt = null;
  };
  const fire = () => {
    clear();
    run();
  };

  return {
    schedule() {
      const now = timers.now();
      firstAskAt ??= now;
      if (timer !== null) timers.clearTimeout(timer);
      const delay = Math.max(0, Math.min(waitMs, firstAskAt + maxWaitMs - now));
      timer = timers.setTimeout(fire, delay);
    },
    flush() {
      if (timer !== null) fire();
    },
    cancel: clear,
    get pending() {
      return timer !== null;
    },
  };
}
