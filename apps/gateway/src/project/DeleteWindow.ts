/**
 * Files deleted on disk, each held for a short window in case its create comes (issue 32): the
 * watcher reports a rename, `git mv` or `git checkout -- f` as a delete and a create, not always
 * in one batch. A delete that nothing took within the window is handed to `expired`, and stays
 * held (a create may still take it) until taken: the caller decides it in turn, after the disk
 * work already queued (a moved folder of thousands of files may take longer than the window).
 */
export class DeleteWindow {
  /** The timer of each held delete; null once its window has passed. */
  private readonly held = new Map<string, NodeJS.Timeout | null>();
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly windowMs: number,
    private readonly expired: (path: string) => void,
  ) {}

  get size(): number {
    return this.held.size;
  }

  paths(): IterableIterator<string> {
    return this.held.keys();
  }

  has(path: string): boolean {
    return this.held.has(path);
  }

  /** Holds the delete of `path` for the window (again from now, if it was held). */
  hold(path: string): void {
    const timer = this.held.get(path);
    if (timer) clearTimeout(timer);
    this.held.set(
      path,
      setTimeout(() => {
        this.held.set(path, null);
        this.expired(path);
      }, this.windowMs),
    );
  }

  /** Takes a delete off the window (paired with its create, expired, dropped); false if it was not held. */
  take(path: string): boolean {
    if (!this.held.has(path)) return false;
    const timer = this.held.get(path);
    if (timer) clearTimeout(timer);
    this.held.delete(path);
    // Waiters resume after the caller has queued what the delete leads to (they run later, as microtasks).
    if (this.held.size === 0) for (const wake of this.waiting.splice(0)) wake();
    return true;
  }

  /** Resolves once no delete is held. */
  async empty(): Promise<void> {
    if (this.held.size > 0) await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  clear(): void {
    for (const path of [...this.held.keys()]) this.take(path);
  }
}
