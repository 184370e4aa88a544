import { FakeClock } from '@flint/test-kit';
import { describe, expect, it } from 'vitest';
import { LocalLimits } from './LocalLimits';
import { dayMs, hourMs } from './SharedLimits';

/** A clock at the start of an hour, so tests can step across hours exactly. */
function clockAtHourStart(): FakeClock {
  return new FakeClock(Math.ceil(1_700_000_000_000 / hourMs) * hourMs);
}

describe('LocalLimits', () => {
  it('a bucket allows its capacity at once, then refills at its rate, never above its capacity', async () => {
    const clock = new FakeClock();
    const limits = new LocalLimits(clock);
    const take = () => limits.take('rate:l1', 2, 3);
    expect([await take(), await take(), await take(), await take()]).toEqual([true, true, true, false]);
    clock.advance(499);
    expect(await take()).toBe(false);
    clock.advance(1);
    expect(await take()).toBe(true);
    clock.advance(60_000);
    expect([await take(), await take(), await take(), await take()]).toEqual([true, true, true, false]);
    expect(await limits.take('rate:l2', 2, 3)).toBe(true);
  });

  it('counts spending in clock hours: a window of an hour is the current hour, a day reaches back 23 more', async () => {
    const clock = clockAtHourStart();
    const limits = new LocalLimits(clock);
    limits.spend('tokens:w', 100);
    clock.advance(hourMs - 1);
    limits.spend('tokens:w', 10);
    expect(await limits.spent('tokens:w', hourMs)).toBe(110);
    clock.advance(1);
    expect(await limits.spent('tokens:w', hourMs)).toBe(0);
    expect(await limits.spent('tokens:w', dayMs)).toBe(110);
    clock.advance(23 * hourMs - 1);
    expect(await limits.spent('tokens:w', dayMs)).toBe(110);
    clock.advance(1);
    expect(await limits.spent('tokens:w', dayMs)).toBe(0);
    expect(await limits.spent('tokens:other', dayMs)).toBe(0);
  });

  it('asking about a short window does not forget what a longer one still reaches', async () => {
    const clock = clockAtHourStart();
    const limits = new LocalLimits(clock);
    limits.spend('tokens:w', 5);
    clock.advance(2 * hourMs);
    expect(await limits.spent('tokens:w', hourMs)).toBe(0);
    expect(await limits.spent('tokens:w', dayMs)).toBe(5);
  });
});
