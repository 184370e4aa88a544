import { FakeClock } from '@flint/test-kit';
import { describe, expect, it } from 'vitest';
import { debounce } from './debounce';

function setup(waitMs: number, maxWaitMs?: number) {
  const clock = new FakeClock();
  let runs = 0;
  const debounced = debounce(() => runs++, waitMs, maxWaitMs, clock);
  return { clock, debounced, runs: () => runs };
}

describe('debounce', () => {
  it('runs once, waitMs after the last ask', () => {
    const { clock, debounced, runs } = setup(1_000);
    debounced.schedule();
    clock.advance(600);
    debounced.schedule();
    clock.advance(999);
    expect(runs()).toBe(0);
    clock.advance(1);
    expect(runs()).toBe(1);
    clock.advance(5_000);
    expect(runs()).toBe(1);
    expect(debounced.pending).toBe(false);
  });

  it('runs no later than maxWaitMs after the first ask while asks keep coming', () => {
    const { clock, debounced, runs } = setup(1_000, 5_000);
    for (let t = 0; t < 5_000; t += 250) {
      debounced.schedule();
      clock.advance(250);
    }
    expect(runs()).toBe(1);
    // The next burst starts a new window.
    debounced.schedule();
    clock.advance(1_000);
    expect(runs()).toBe(2);
  });

  it('never runs without an ask, and not after cancel', () => {
    const { clock, debounced, runs } = setup(1_000);
    clock.advance(10_000);
    debounced.schedule();
    debounced.cancel();
    clock.advance(10_000);
    expect(runs()).toBe(0);
  });

  it('flush runs a pending ask now, and only a pending one', () => {
    const { clock, debounced, runs } = setup(1_000);
    debounced.flush();
    expect(runs()).toBe(0);
    debounced.schedule();
    debounced.flush();
    expect(runs()).toBe(1);
    clock.advance(2_000);
    expect(runs()).toBe(1);
  });
});
