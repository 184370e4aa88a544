/**
 * A stream's events pushed from socket callbacks and pulled with `for await`: the one async step
 * between a provider's network read and its consumer.
 *
 * Why not an async generator per layer: each `yield` of an async generator awaits, so every layer
 * (socket reader, adapter, circuit breaker) added promise hops to every network read. At 5k
 * tokens/s a read holds ~5 tokens, and those layers cost ~0.65 µs per token of ~2.7 (50 streams
 * in process; decision 0012). Here a read's events are pushed synchronously and a waiting
 * `next()` is resolved once.
 *
 * Nothing bounds the queue: a provider's answer is bounded by its `maxOutputTokens`, and the
 * gateway's consumers (a turn, a completion) take every event as it comes.
 */
export interface EventQueueHooks {
  /** Called at the first `next()`: nothing is requested before someone reads (like a generator). */
  start(): void;
  /** The consumer stopped early (`break`, `return()`): release what the stream holds. */
  stop?(): void;
}

export interface EventQueueOptions<T> extends EventQueueHooks {
  /**
   * Events that arrive while the consumer is busy may be merged into the last one it has not
   * taken (text after text: one event, one step for the consumer). Null: keep both.
   */
  merge?(queued: T, next: T): T | null;
  /** Once aborted, the queue ends at once: what is queued is dropped, later pushes too. */
  signal?: AbortSignal;
}

export class EventQueue<T> implements AsyncIterableIterator<T> {
  private readonly items: T[] = [];
  private head = 0;
  private started = false;
  private closed = false;
  private failure: { error: unknown } | null = null;
  private waiter: { resolve(result: IteratorResult<T, undefined>): void; reject(error: unknown): void } | null = null;

  constructor(private readonly hooks: EventQueueOptions<T>) {}

  /** Whether the stream ended, failed, or the consumer stopped: later pushes are dropped. */
  get isClosed(): boolean {
    return this.closed;
  }

  push(item: T): void {
    if (this.closed) return;
    const waiter = this.waiter;
    if (waiter) {
      this.waiter = null;
      waiter.resolve({ value: item, done: false });
      return;
    }
    const last = this.items.length - 1;
    const merged = last >= this.head && this.hooks.merge ? this.hooks.merge(this.items[last]!, item) : null;
    if (merged !== null) this.items[last] = merged;
    else this.items.push(item);
  }

  /** The stream ended: what is queued is still delivered, then the iteration ends. */
  end(): void {
    if (this.closed) return;
    this.closed = true;
    this.settleWaiter();
  }

  /** The stream failed: what is queued is still delivered, then `next()` rejects with `error`. */
  fail(error: unknown): void {
    if (this.closed) return;
    this.closed = true;
    this.failure = { error };
    this.settleWaiter();
  }

  next(): Promise<IteratorResult<T, undefined>> {
    if (this.head < this.items.length) {
      const item = this.items[this.head++]!;
      if (this.head === this.items.length) {
        this.items.length = 0;
        this.head = 0;
      }
      return Promise.resolve({ value: item, done: false });
    }
    if (this.closed) return this.finalResult();
    if (!this.started) {
      this.started = true;
      const { signal } = this.hooks;
      if (signal?.aborted) {
        this.drop();
        return this.finalResult();
      }
      try {
        this.hooks.start();
      } catch (error) {
        this.fail(error);
      }
      // Listened for after `start`, which sends the request: the request leaves that much
      // sooner, and nothing but `start` itself can abort in between.
      if (signal?.aborted) this.drop();
      else signal?.addEventListener('abort', () => this.drop(), { once: true });
      // `start` may have pushed, ended or failed synchronously.
      if (this.head < this.items.length || this.closed) return this.next();
    }
    return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
  }

  return(): Promise<IteratorResult<T, undefined>> {
    const wasOpen = this.started && !this.closed;
    this.drop();
    if (wasOpen) this.hooks.stop?.();
    return Promise.resolve({ value: undefined, done: true });
  }

  /** Ends now, without what is queued. */
  private drop(): void {
    this.closed = true;
    this.failure = null;
    this.items.length = 0;
    this.head = 0;
    this.settleWaiter();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private finalResult(): Promise<IteratorResult<T, undefined>> {
    if (!this.failure) return Promise.resolve({ value: undefined, done: true });
    const { error } = this.failure;
    // Reported once, as a generator would: a later `next()` just says done.
    this.failure = null;
    return Promise.reject(error);
  }

  private settleWaiter(): void {
    const waiter = this.waiter;
    if (!waiter) return;
    this.waiter = null;
    this.finalResult().then(waiter.resolve, waiter.reject);
  }
}
