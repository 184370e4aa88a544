import { describe, expect, it } from 'vitest';
import { eventLoopBusy } from './eventLoopBusy';

// Real time, not a fake clock: what is measured is how this process's event loop spent it.
const waitMs = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('eventLoopBusy', () => {
  it('says busy after a window spent running code, and not after one spent waiting', async () => {
    await waitMs(60);
    eventLoopBusy(); // starts a window
    const until = performance.now() + 70;
    while (performance.now() < until); // the loop runs code the whole window
    expect(eventLoopBusy()).toBe(true);
    await waitMs(70); // the loop waits the whole window
    expect(eventLoopBusy()).toBe(false);
  });
});
