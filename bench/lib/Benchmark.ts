import type { Table } from './printTable';

export interface BenchContext {
  /** A few seconds per benchmark: proves it still runs, numbers are indicative only. */
  smoke: boolean;
  /** Prints a line under the benchmark's heading; a line logged counts as progress too. */
  log(message: string): void;
  /**
   * A step finished (a sample, a page, a round of keystrokes), named for the message if it hangs
   * after it. A smoke run fails a benchmark only when it goes silent (see ProgressWatchdog), so
   * one whose steps run minutes apart on a busy machine should report them.
   */
  progress(step: string): void;
}

/** A target from the issue, checked against this run. `met: null` when it does not apply. */
export interface TargetCheck {
  name: string;
  target: string;
  actual: string;
  met: boolean | null;
}

export interface BenchReport {
  tables: Table[];
  targets: TargetCheck[];
  /** Everything else worth keeping in the JSON (raw summaries, per-arm details). */
  data: Record<string, unknown>;
}

export interface Benchmark {
  /** "B1" … "B7": what `--only` takes. */
  id: string;
  /** File name of the JSON result: bench/results/<name>.json. */
  name: string;
  title: string;
  run(ctx: BenchContext): Promise<BenchReport>;
}
