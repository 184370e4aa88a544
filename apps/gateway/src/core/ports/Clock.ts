export type TimerHandle = unknown;

/** Time, injected so the core has no global timers and tests run on a fake clock. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, delayMs: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
  /** Runs `fn` once the I/O that is ready now has been handled (Node's `setImmediate`). */
  afterIo(fn: () => void): void;
}
