/**
 * The CPU a process spends between two turns of its event loop, sampled by a 1 ms interval
 * (started on first use): wall-clock loop delay on a shared machine is mostly other processes,
 * while CPU time between two ticks is this process's own work that nothing else could interleave
 * with — an upper bound of its longest task (plus a tick's own cost).
 */
class LoopCpuMonitor {
  private last = process.cpuUsage();
  private maxMicros = 0;
  private timer: NodeJS.Timeout | null = null;

  /** The largest CPU span (ms) since the last call, and starts over. */
  takeMaxMs(): number {
    if (!this.timer) {
      this.timer = setInterval(() => this.tick(), 1);
      this.timer.unref();
    }
    this.tick();
    const max = this.maxMicros / 1000;
    this.maxMicros = 0;
    return max;
  }

  private tick(): void {
    const now = process.cpuUsage();
    const spent = now.user - this.last.user + (now.system - this.last.system);
    this.last = now;
    if (spent > this.maxMicros) this.maxMicros = spent;
  }
}

export const loopCpuMonitor = new LoopCpuMonitor();
