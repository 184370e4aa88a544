/**
 * Whether this process's event loop has been busy lately: its utilisation (time running
 * callbacks ÷ wall time, Node's `performance.eventLoopUtilization`) over the last window of at
 * least `windowMs`. Sampled when asked, at most once per window, so asking costs a clock read.
 */
import { performance } from 'node:perf_hooks';

const windowMs = 50;
/** Above this share of the time running callbacks, the loop counts as busy. */
const busyUtilization = 0.5;

let last = performance.eventLoopUtilization();
let lastAt = performance.now();
let busy = false;

export function eventLoopBusy(): boolean {
  const now = performance.now();
  if (now - lastAt >= windowMs) {
    const current = performance.eventLoopUtilization();
    busy = performance.eventLoopUtilization(current, last).utilization >= busyUtilization;
    last = current;
    lastAt = now;
  }
  return busy;
}
