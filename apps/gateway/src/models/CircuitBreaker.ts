/**
 * Turns a provider that keeps failing into an immediate, clear error instead of a hang per
 * request (DESIGN §6). Closed → (K consecutive failures) → open: fail fast with `circuit_open` →
 * (cool-down) → half-open: one trial request; its success closes the circuit, its failure
 * reopens it.
 */
import { ProviderError, type InfillRequest, type ModelEvent, type ModelProvider, type ModelRequest, type PromptRequest } from './ModelProvider';

export type CircuitState = 'closed' | 'open' | 'half-open';

export interface CircuitBreakerOptions {
  clock: { now(): number };
  /** Consecutive failures that open the circuit. Default 5. */
  failureThreshold?: number;
  /** How long the circuit stays open before a trial. Default 30 s. */
  cooldownMs?: number;
  /** What a caller rejected while the half-open trial runs is told to wait. Default 1 s. */
  trialRetryMs?: number;
  /** Names the provider in the error a user sees. */
  name?: string;
  /** Which failures say the provider is unhealthy. Default: see `isHealthFailure`. */
  isFailure?: (error: ProviderError) => boolean;
}

/**
 * Failures of the provider itself. Not: a bad key, a too-long prompt or a spent quota (retrying
 * cannot help and the provider is fine), nor a rate limit that says when to come back (the caller
 * already knows when to retry).
 */
export function isHealthFailure(error: ProviderError): boolean {
  switch (error.code) {
    case 'network':
    case 'overloaded':
    case 'bad_response':
      return true;
    case 'rate_limited':
      return error.retryAfterMs === null;
    default:
      return false;
  }
}

export class CircuitBreaker {
  private current: CircuitState = 'closed';
  private failures = 0;
  private openedAt = 0;
  private trialRunning = false;
  private readonly threshold: number;
  private readonly cooldownMs: number;

  constructor(private readonly options: CircuitBreakerOptions) {
    this.threshold = options.failureThreshold ?? 5;
    this.cooldownMs = options.cooldownMs ?? 30_000;
  }

  get state(): CircuitState {
    if (this.current === 'open' && this.options.clock.now() - this.openedAt >= this.cooldownMs) return 'half-open';
    return this.current;
  }

  /** Lets a request through or throws `circuit_open` with when to try again. */
  admit(): void {
    const state = this.state;
    if (state === 'closed') return;
    if (state === 'half-open' && !this.trialRunning) {
      this.current = 'half-open';
      this.trialRunning = true;
      return;
    }
    const retryAfterMs =
      state === 'open' ? this.openedAt + this.cooldownMs - this.options.clock.now() : (this.options.trialRetryMs ?? 1_000);
    const who = this.options.name ?? 'The model provider';
    throw new ProviderError(
      'circuit_open',
      `${who} failed ${this.threshold} times in a row, so Flint is not calling it for ${Math.ceil(retryAfterMs / 1000)} s. Try again then, or switch route.`,
      retryAfterMs,
      this.options.name ?? '',
    );
  }

  /** The provider answered (its first event arrived): it is healthy. */
  onSuccess(): void {
    this.current = 'closed';
    this.failures = 0;
    this.trialRunning = false;
  }

  onFailure(error: ProviderError): void {
    if (!(this.options.isFailure ?? isHealthFailure)(error)) return this.onAbandon();
    this.failures++;
    if (this.current === 'half-open' || this.failures >= this.threshold) {
      this.current = 'open';
      this.openedAt = this.options.clock.now();
    }
    this.trialRunning = false;
  }

  /** The request ended without saying anything about health (aborted, or a caller's mistake). */
  onAbandon(): void {
    this.trialRunning = false;
  }
}

/** A ModelProvider that consults `breaker` around every stream of `provider` (and its optional FIM methods). */
export function withCircuitBreaker(
  provider: ModelProvider,
  options: CircuitBreakerOptions,
): ModelProvider & { readonly breaker: CircuitBreaker } {
  const breaker = new CircuitBreaker({ name: provider.kind, ...options });
  const guarded = (signal: AbortSignal, open: () => AsyncIterable<ModelEvent>) => new GuardedStream(breaker, signal, open);
  const wrapped: ModelProvider & { readonly breaker: CircuitBreaker } = {
    kind: provider.kind,
    breaker,
    close: () => provider.close(),
    stream: (request: ModelRequest, signal: AbortSignal) => guarded(signal, () => provider.stream(request, signal)),
  };
  // Only what the provider has: callers test for these methods to pick a completion strategy.
  if (provider.completePrompt) {
    const completePrompt = provider.completePrompt.bind(provider);
    wrapped.completePrompt = (request: PromptRequest, signal: AbortSignal) => guarded(signal, () => completePrompt(request, signal));
  }
  if (provider.infill) {
    const infill = provider.infill.bind(provider);
    wrapped.infill = (prefix: string, suffix: string, request: InfillRequest, signal: AbortSignal) =>
      guarded(signal, () => infill(prefix, suffix, request, signal));
  }
  return wrapped;
}

/**
 * One stream through the breaker: admitted at the first `next()`; healthy at its first event (a
 * long generation must not hold the half-open circuit, and every other caller, for its whole
 * duration); a ProviderError is a failure; anything else, or an end before any event, says
 * nothing about health. An iterator rather than an async generator: a generator's every `yield`
 * would add promise hops to every network read (see EventQueue).
 */
class GuardedStream implements AsyncIterableIterator<ModelEvent> {
  private inner: AsyncIterator<ModelEvent> | null = null;
  private answered = false;
  private done = false;

  constructor(
    private readonly breaker: CircuitBreaker,
    private readonly signal: AbortSignal,
    private readonly open: () => AsyncIterable<ModelEvent>,
  ) {}

  next(): Promise<IteratorResult<ModelEvent, undefined>> {
    if (this.done) return Promise.resolve({ value: undefined, done: true });
    if (!this.inner) {
      if (this.signal.aborted) return Promise.resolve(this.finishResult());
      try {
        this.breaker.admit();
      } catch (error) {
        this.done = true;
        return Promise.reject(error);
      }
      this.inner = this.open()[Symbol.asyncIterator]();
    }
    return this.inner.next().then(this.onResult, this.onError);
  }

  return(): Promise<IteratorResult<ModelEvent, undefined>> {
    if (this.done || !this.inner?.return) return Promise.resolve(this.finishResult());
    const ended = this.finishResult();
    return this.inner.return().then(() => ended);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private readonly onResult = (result: IteratorResult<ModelEvent>): IteratorResult<ModelEvent, undefined> => {
    if (result.done) return this.finishResult();
    if (!this.answered) {
      this.answered = true;
      this.breaker.onSuccess();
    }
    return result;
  };

  private readonly onError = (error: unknown): never => {
    this.done = true;
    if (error instanceof ProviderError) this.breaker.onFailure(error);
    else this.breaker.onAbandon();
    throw error;
  };

  /** Ended without an error: unless an event came, the stream said nothing about health. */
  private finishResult(): IteratorResult<ModelEvent, undefined> {
    if (!this.done && !this.answered && this.inner) this.breaker.onAbandon();
    this.done = true;
    return { value: undefined, done: true };
  }
}
