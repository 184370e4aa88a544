import { FakeClock } from '@flint/test-kit';
import { describe, expect, it } from 'vitest';
import { ProgressWatchdog } from './ProgressWatchdog';

const smoke = { stallMs: 120_000, limitMs: 1_200_000 };

/** The watchdog's verdict so far: the error it failed with, or null while it has not. */
function verdictOf(watchdog: ProgressWatchdog): () => Error | null {
  let verdict: Error | null = null;
  watchdog.expired.catch((error: Error) => (verdict = error));
  return () => verdict;
}

// Rejections settle on the microtask queue: let them run before reading the verdict.
const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('ProgressWatchdog', () => {
  it('lets a benchmark run far past the stall window while it keeps reporting steps', async () => {
    const clock = new FakeClock();
    const watchdog = new ProgressWatchdog('B5', smoke, clock);
    const verdict = verdictOf(watchdog);
    // A loaded machine: a step every 100 s, ten minutes in all.
    for (let step = 1; step <= 6; step++) {
      clock.advance(100_000);
      watchdog.progressed(`page ${step}`);
    }
    clock.advance(119_000);
    await settled();
    expect(verdict()).toBeNull();
    expect(watchdog.longestSilenceMs).toBe(119_000);
    watchdog.dispose();
    expect(clock.pendingTimers).toBe(0);
  });

  it('fails a benchmark that stops reporting, naming it and how long it was silent', async () => {
    const clock = new FakeClock();
    const watchdog = new ProgressWatchdog('B6B', smoke, clock);
    const verdict = verdictOf(watchdog);
    clock.advance(30_000);
    watchdog.progressed('keystroke round 4 of 10');
    clock.advance(119_999);
    await settled();
    expect(verdict()).toBeNull();
    clock.advance(1);
    await settled();
    expect(verdict()?.message).toBe('B6B made no progress for 120 s (a smoke benchmark may be silent for 120 s), 150 s after it started; its last step: keystroke round 4 of 10');
    expect(clock.pendingTimers).toBe(0);
  });

  it('says how long the benchmark was really silent when its timer fired late', async () => {
    const clock = new FakeClock(0, -40_000);
    const watchdog = new ProgressWatchdog('B5', smoke, clock);
    const verdict = verdictOf(watchdog);
    clock.advance(200_000);
    await settled();
    expect(verdict()?.message).toMatch(/^B5 made no progress for 160 s .*its last step: none yet$/);
  });

  it('fails a benchmark that keeps reporting but never ends, at the overall limit', async () => {
    const clock = new FakeClock();
    const watchdog = new ProgressWatchdog('B3', smoke, clock);
    const verdict = verdictOf(watchdog);
    for (let step = 1; step < 20; step++) {
      clock.advance(60_000);
      watchdog.progressed(`level ${step}`);
    }
    await settled();
    expect(verdict()).toBeNull();
    clock.advance(60_000);
    await settled();
    expect(verdict()?.message).toBe('B3 did not finish within 1200 s (last step: level 19, 60 s before)');
  });

  it('gives a full run no stall window, only its overall limit', async () => {
    const clock = new FakeClock();
    const watchdog = new ProgressWatchdog('B2', { limitMs: 900_000 }, clock);
    const verdict = verdictOf(watchdog);
    clock.advance(899_999);
    await settled();
    expect(verdict()).toBeNull();
    clock.advance(1);
    await settled();
    expect(verdict()?.message).toMatch(/^B2 did not finish within 900 s/);
  });
});
