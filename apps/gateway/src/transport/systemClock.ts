import type { Clock } from '../core/ports/Clock';

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, delayMs) => {
    // Node caps timers at 2^31-1 ms; a link expiring later simply gets re-armed.
    const capped = Math.min(delayMs, 2 ** 31 - 1);
    return setTimeout(fn, capped);
  },
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  afterIo: (fn) => void setImmediate(fn),
};
