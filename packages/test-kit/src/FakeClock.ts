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

  constructor(startMs = 1_700_000_000_000) {
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

  /** Moves time forward, firing due timers in time order (timers set by timers included). */
  advance(ms: number): void {
    const target = this.nowMs + ms;
    for (;;) {
      const due = this.timers
        .filter((t) => t.at <= target)
        .sort((a, b) => a.at - b.at || a.handle.id - b.handle.id)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.nowMs = Math.max(this.nowMs, due.at);
      due.fn();
    }
    this.nowMs = target;
  }

  get pendingTimers(): number {
    return this.timers.length;
  }
}
