export type TimerHandle = { readonly id: number };

interface Timer {
  handle: TimerHandle;
  at: number;
  fn: () => void;
}

/**
 * A clock whose time moves only when a test says so. Structurally satisfies the gateway's
 * `Clock`, so core tests never sleep.
 */
export class FakeClock {
  private nowMs: number;
  private nextId = 1;
  private timers: Timer[] = [];

  /**
   * @param timersEarlyMs fire each timer this long before `now()` reaches its due time, as Node
   * does: it times timers by the loop's clock, which lags the wall clock within a turn of the loop.
   * Negative: that long after, as in a process the machine does not run on time.
   */
  constructor(
    startMs = 1_700_000_000_000,
    private readonly timersEarlyMs = 0,
  ) {
    this.nowMs = startMs;
  }

  now(): number {
    return this.nowMs;
  }

  setTimeout(fn: () => void, delayMs: number): TimerHandle {
    const handle = { id: this.nextId++ };
    this.timers.push({ handle, at: this.nowMs + Math.max(0, delayMs), fn });
    return handle;
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers = this.timers.filter((t) => t.handle !== handle);
  }

  /** The fake has no I/O: `fn` is a timer due now (it runs at the next `advance`, even of 0 ms). */
  afterIo(fn: () => void): void {
    this.setTimeout(fn, 0);
  }

  /** Moves time forward, firing due timers in time order (timers set by timers included). */
  advance(ms: number): void {
    const target = this.nowMs + ms;
    for (;;) {
      const due = this.timers
        .filter((t) => t.at - this.timersEarlyMs <= target)
        .sort((a, b) => a.at - b.at || a.handle.id - b.handle.id)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.nowMs = Math.max(this.nowMs, due.at - this.timersEarlyMs);
      due.fn();
    }
    this.nowMs = target;
  }

  get pendingTimers(): number {
    return this.timers.length;
  }
}
