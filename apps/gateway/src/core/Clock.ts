export type TimerHandle = unknown;

/** Time, injected so the core has no global timers and tests run on a fake clock. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, delayMs: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}
