import { spawn as spawnPty, type IPty } from '@lydell/node-pty';
import type { TerminalInfo } from '@flint/protocol';
import { CsiClamp } from './CsiClamp';
import { TerminalScreen } from './TerminalScreen';

export interface TerminalOptions {
  termId: string;
  kind: TerminalInfo['kind'];
  title: string;
  openedBy: string;
  cols: number;
  rows: number;
  /** The process: bwrap and its arguments (or, unsafe, the shell itself). */
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** Output a terminal may produce per second; past it the pty is paused (the writer blocks). */
  outputBytesPerSecond: number;
  /** Output leaves in batches this often (one frame per batch, not one per read). */
  batchMs: number;
  /** A batch of output, at most every `batchMs`. */
  onOutput(data: string): void;
  onExit(exitCode: number): void;
  scrollback?: number;
}

/** Bytes the headless screen may have queued before the pty is paused. */
const screenBacklogBytes = 256 * 1024;
/** How long output must be quiet after an exit before the end is told, and the most it waits. */
const exitQuietMs = 30;
const exitDrainMs = 1000;
/** Output this small, after none, is taken for an echo; how many may leave at once per interval. */
const echoBytes = 128;
const quickFlushesPerBatch = 4;
/** A batch this large leaves at once. */
const batchBytes = 64 * 1024;

/**
 * One pseudo-terminal and the screen everyone shares: the headless xterm holds the screen and
 * scrollback a late joiner gets (`screenAt`; in a worker), the output leaves in batches. Back-pressure is at
 * the source: while the screen is behind or the terminal is over its output rate, the pty is
 * paused, so the kernel blocks the writer (`yes` waits) instead of the gateway buffering.
 */
export class Terminal {
  readonly info: TerminalInfo;
  private readonly pty: IPty;
  private readonly screenState: TerminalScreen;
  private batch = '';
  private batchTimer: NodeJS.Timeout | null = null;
  private screenBacklog = 0;
  private windowStart = Date.now();
  private windowBytes = 0;
  private paused = false;
  private rateTimer: NodeJS.Timeout | null = null;
  private exited = false;
  private disposed = false;
  private lastDataAt = 0;
  /** Small outputs sent at once in the current batch interval. */
  private quickFlushes = 0;
  /** Huge counts in control sequences are clamped before any screen parses them ([P48]). */
  private readonly clamp = new CsiClamp();

  constructor(private readonly options: TerminalOptions) {
    this.info = { termId: options.termId, kind: options.kind, title: options.title, openedBy: options.openedBy, cols: options.cols, rows: options.rows, exitCode: null };
    this.screenState = new TerminalScreen(options.cols, options.rows, options.scrollback ?? 1000, (chars) => {
      this.screenBacklog -= chars;
      this.maybeResume();
    });
    this.pty = spawnPty(options.file, options.args, { name: 'xterm-256color', cols: options.cols, rows: options.rows, cwd: options.cwd, env: options.env });
    this.pty.onData((data) => {
      this.lastDataAt = Date.now();
      const clamped = this.clamp.push(data);
      if (clamped !== '') this.output(clamped);
    });
    this.pty.onExit(({ exitCode, signal }) => {
      this.exited = true;
      this.info.exitCode = signal ? 128 + signal : exitCode;
      this.afterLastOutput(() => this.options.onExit(this.info.exitCode ?? 0));
    });
  }

  /**
   * The process's exit can be reported before the last of its output is read from the pty: the
   * end is told once the output has been quiet a moment (at most `exitDrainMs`) and the screen
   * has parsed all of it.
   */
  private afterLastOutput(then: () => void): void {
    const exitedAt = Date.now();
    const check = () => {
      const now = Date.now();
      if (now - this.lastDataAt < exitQuietMs && now - exitedAt < exitDrainMs && !this.disposed) {
        setTimeout(check, exitQuietMs);
        return;
      }
      if (this.disposed) return then();
      const held = this.clamp.flush();
      if (held !== '') this.output(held);
      this.flush();
      then();
    };
    setTimeout(check, exitQuietMs);
  }

  get running(): boolean {
    return !this.exited;
  }

  write(data: string): void {
    if (!this.exited) this.pty.write(data);
  }

  /** A line from the gateway (not the process), shown to everyone watching, in its own colour. */
  notice(line: string): void {
    if (this.exited || this.disposed) return;
    this.output(`\r\n\x1b[33m[flint] ${line.replace(/[\x00-\x1f\x7f-\x9f]/g, ' ')}\x1b[0m\r\n`);
  }

  /**
   * Ends the processes, saying why in the terminal; the terminal stays (exited) so everyone
   * watching reads the line.
   */
  stop(line: string): void {
    this.notice(line);
    if (this.exited) return;
    for (const end of [() => process.kill(-this.pty.pid, 'SIGKILL'), () => this.pty.kill('SIGKILL')]) {
      try {
        end();
      } catch {
        // not a group leader, or gone already
      }
    }
  }

  resize(cols: number, rows: number): void {
    if (this.exited) return;
    this.info.cols = cols;
    this.info.rows = rows;
    this.pty.resize(cols, rows);
    this.screenState.resize(cols, rows);
  }

  /** Ends the terminal and, with its sandbox's PID namespace, every process started in it. */
  kill(): void {
    if (this.batchTimer) clearTimeout(this.batchTimer);
    if (this.rateTimer) clearTimeout(this.rateTimer);
    this.batchTimer = this.rateTimer = null;
    if (!this.exited) {
      try {
        // The whole process group first: bwrap's inner half, killed while still setting up, has
        // no die-with-parent yet, and would outlive the outer half (and hold the sandbox).
        process.kill(-this.pty.pid, 'SIGKILL');
      } catch {
        // Not a group leader, or gone already: the pty's own kill below decides.
      }
      try {
        this.pty.kill('SIGKILL');
      } catch (error) {
        // Already gone between its exit and our kill: nothing to end.
        if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
      }
    }
    this.disposed = true;
    this.screenState.dispose();
  }

  /**
   * Output goes to the batch as it is read (a keystroke's echo does not wait for the screen to
   * parse it) and to the screen; `screenAt` gives a viewer the screen at the point where the
   * batches it will get next begin. The first small output after a quiet spell leaves at once (an
   * echo); what follows within `batchMs` leaves together.
   */
  private output(data: string): void {
    this.screenBacklog += data.length;
    this.screenState.write(data);
    const quiet = this.batch === '';
    this.batch += data;
    // A few echoes per interval leave at once: a flood of small writes still leaves in batches.
    const echo = quiet && data.length <= echoBytes && this.quickFlushes < quickFlushesPerBatch;
    if (echo) this.quickFlushes++;
    if (this.batch.length >= batchBytes || this.batchTimer === null || echo) this.flush();
    const now = Date.now();
    if (now - this.windowStart >= 1000) {
      this.windowStart = now;
      this.windowBytes = 0;
    }
    this.windowBytes += data.length;
    if (this.screenBacklog > screenBacklogBytes || this.windowBytes > this.options.outputBytesPerSecond) this.pause();
  }

  /**
   * The screen as of everything sent until now: the batch leaves first, then `callback` gets the
   * screen once it has parsed all of that (and nothing after: the screen parses in order and
   * calls back in between). Output read meanwhile leaves in later batches, after this point.
   */
  screenAt(callback: (screen: string) => void): void {
    this.flush();
    if (this.disposed) return;
    this.screenState.screenAt((screen) => {
      if (!this.disposed) callback(screen);
    });
  }

  private pause(): void {
    if (this.paused || this.exited) return;
    this.paused = true;
    this.pty.pause();
    if (this.windowBytes > this.options.outputBytesPerSecond) {
      this.rateTimer = setTimeout(() => {
        this.rateTimer = null;
        this.windowStart = Date.now();
        this.windowBytes = 0;
        this.maybeResume();
      }, Math.max(1, 1000 - (Date.now() - this.windowStart)));
    }
  }

  private maybeResume(): void {
    if (!this.paused || this.rateTimer || this.screenBacklog > screenBacklogBytes / 2) return;
    this.paused = false;
    if (!this.exited) this.pty.resume();
  }

  private flush(): void {
    const data = this.batch;
    this.batch = '';
    if (data !== '') this.options.onOutput(data);
    // Quiet for a batch interval: the next output leaves at once again.
    if (this.batchTimer) clearTimeout(this.batchTimer);
    this.batchTimer = data === '' || this.exited ? null : setTimeout(() => this.flushAfterWait(), this.options.batchMs);
  }

  private flushAfterWait(): void {
    this.batchTimer = null;
    this.quickFlushes = 0;
    if (this.batch !== '') this.flush();
  }
}
