/**
 * Turns a route's model that keeps failing into an immediate, clear error instead of a hang per
 * request (DESIGN §6). Closed → (K consecutive failures) → open: fail fast with `circuit_open` →
 * (cool-down) → half-open: one trial request; its answer closes the circuit, its failure
 * reopens it. A failure counts whenever it comes: a connection that drops, a stream that turns
 * to garbage or stalls after the first token is as unhealthy as one refused before it; only a
 * stream that ends well resets the count.
 */
import type { Log } from '../core/ports/Log';
import { ProviderError, type CircuitState, type InfillRequest, type ModelEvent, type ModelProvider, type ModelRequest, type PromptRequest, type Route } from '../core/ports/ModelProvider';
import { WireProviderError } from './providerErrorFromWire';

export type { CircuitState };

export interface CircuitBreakerOptions {
  clock: { now(): number };
  /** Consecutive failures that open the circuit. Default 5. */
  failureThreshold?: number;
  /** How long the circuit stays open before a trial. Default 30 s. */
  cooldownMs?: number;
  /** What a caller rejected while the half-open trial runs is told to wait. Default 1 s. */
  trialRetryMs?: number;
  /** Where the endpoint is, for messages and logs: "api.cerebras.ai", "127.0.0.1:8080", "embedded". */
  host?: string;
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
  readonly host: string;
  private current: CircuitState = 'closed';
  private failures = 0;
  private openedAt = 0;
  private trialRunning = false;
  private readonly threshold: number;
  private readonly cooldownMs: number;

  constructor(private readonly options: CircuitBreakerOptions) {
    this.host = options.host ?? 'unknown';
    this.threshold = options.failureThreshold ?? 5;
    this.cooldownMs = options.cooldownMs ?? 30_000;
  }

  get state(): CircuitState {
    if (this.current === 'open' && this.options.clock.now() - this.openedAt >= this.cooldownMs) return 'half-open';
    return this.current;
  }

  /** Health failures since the last stream that ended well. */
  get consecutiveFailures(): number {
    return this.failures;
  }

  /** The state, and while open how long until a trial is let through (else 0). */
  snapshot(): { state: CircuitState; retryInMs: number } {
    const state = this.state;
    return { state, retryInMs: state === 'open' ? this.openedAt + this.cooldownMs - this.options.clock.now() : 0 };
  }

  /** Null: the request may go. A number: it may not, and that is when to try again (ms). */
  admit(): number | null {
    const state = this.state;
    if (state === 'closed') return null;
    if (state === 'half-open' && !this.trialRunning) {
      this.current = 'half-open';
      this.trialRunning = true;
      return null;
    }
    return state === 'open' ? this.openedAt + this.cooldownMs - this.options.clock.now() : (this.options.trialRetryMs ?? 1_000);
  }

  /**
   * The stream's first event came: the endpoint answers, so a trial closes the circuit (a long
   * generation must not hold every other caller at the half-open door for its whole duration).
   * The count stands until the stream ends well: an answer that breaks off still counts.
   */
  onAnswer(): void {
    if (!this.trialRunning) return;
    this.current = 'closed';
    this.trialRunning = false;
  }

  /** A stream ended without a failure after answering (its end, or its consumer stopped it). */
  onSuccess(): void {
    this.current = 'closed';
    this.failures = 0;
    this.trialRunning = false;
  }

  /** A request failed, before its answer or during it. */
  onFailure(error: ProviderError): void {
    if (!(this.options.isFailure ?? isHealthFailure)(error)) return this.onAbandon();
    this.failures++;
    if (this.current === 'half-open' || this.failures >= this.threshold) {
      this.current = 'open';
      this.openedAt = this.options.clock.now();
    }
    this.trialRunning = false;
  }

  /** The request ended without saying anything about health (aborted first, or a caller's mistake). */
  onAbandon(): void {
    this.trialRunning = false;
  }
}

/** What a route's guard needs besides its breaker. */
export interface RouteGuardOptions {
  /** The route these streams serve: named in the refusal and in every failure's log line. */
  route?: Route;
  /** Other routes behind the same breaker (the same endpoint and model): the refusal names them. */
  sharedWith?: Route[];
  /** A route behind another breaker to suggest instead, while that breaker is not open. */
  switchTo?: { route: Route; breaker: CircuitBreaker } | null;
  /** Where each provider failure is logged, one warn line each. */
  log?: Log;
}

export type GuardedProvider = ModelProvider & { readonly breaker: CircuitBreaker };

/**
 * A ModelProvider that consults a breaker around every stream of `provider` (and its optional
 * FIM methods): `breaker` when routes share one, else a breaker of its own.
 */
export function withCircuitBreaker(
  provider: ModelProvider,
  options: (CircuitBreakerOptions | { breaker: CircuitBreaker }) & RouteGuardOptions,
): GuardedProvider {
  const breaker = 'breaker' in options ? options.breaker : new CircuitBreaker({ host: provider.kind, ...options });
  const guard = new RouteGuard(breaker, options);
  const guarded = (signal: AbortSignal, open: () => AsyncIterable<ModelEvent>) => new GuardedStream(guard, signal, open);
  const wrapped: GuardedProvider = {
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

/** One route's view of its breaker: the words of its refusal, the log of its failures. */
class RouteGuard {
  constructor(
    readonly breaker: CircuitBreaker,
    private readonly options: RouteGuardOptions,
  ) {}

  /** The error for a request the breaker turned away: which route asked, which host failed, what to do. */
  refusal(retryAfterMs: number): ProviderError {
    const { route, sharedWith = [], switchTo } = this.options;
    const { host } = this.breaker;
    const who = route ? `The ${route} route's provider at ${host}` : `The provider at ${host}`;
    const shared = sharedWith.length > 0 ? ` (shared with the ${sharedWith.join(' and ')} route${sharedWith.length > 1 ? 's' : ''})` : '';
    const seconds = Math.ceil(retryAfterMs / 1000);
    const count = this.breaker.consecutiveFailures;
    const failed = `failed ${count} time${count === 1 ? '' : 's'} in a row`;
    const what =
      this.breaker.state === 'half-open' ? `${failed} and one request is trying it again; Flint asks it again in ${seconds} s` : `${failed}; Flint stops asking it for ${seconds} s`;
    const other = switchTo?.breaker.host === host ? 'another model' : 'another provider';
    const advice = switchTo && switchTo.breaker.state !== 'open' ? `Try again then, or switch to the ${switchTo.route} route, which uses ${other}.` : 'Try again then.';
    return new ProviderError('circuit_open', `${who}${shared} ${what}. ${advice}`, retryAfterMs, host);
  }

  /** Counts the failure, then logs it as one line: what an operator needs to find it at the provider. */
  failed(error: ProviderError, tokensBeforeFailure: number): void {
    this.breaker.onFailure(error);
    this.options.log?.('warn', 'provider failed', {
      route: this.options.route ?? null,
      host: this.breaker.host,
      status: error.status,
      requestId: error.requestId,
      code: error.code,
      providerCode: error instanceof WireProviderError ? error.wireCode : null,
      tokensBeforeFailure,
      breaker: this.breaker.state,
      consecutiveFailures: this.breaker.consecutiveFailures,
    });
  }
}

/**
 * One stream through the breaker: admitted at the first `next()`; answering at its first event;
 * healthy once it ends without a failure after that (at its end, or when its consumer stops
 * it); a ProviderError at any point is a failure; anything else, or an end before any event,
 * says nothing about health. An iterator rather than an async generator: a generator's every
 * `yield` would add promise hops to every network read (see EventQueue).
 */
class GuardedStream implements AsyncIterableIterator<ModelEvent> {
  private inner: AsyncIterator<ModelEvent> | null = null;
  private answered = false;
  /** Text tokens delivered so far: what a failure cost. */
  private tokens = 0;
  private done = false;

  constructor(
    private readonly guard: RouteGuard,
    private readonly signal: AbortSignal,
    private readonly open: () => AsyncIterable<ModelEvent>,
  ) {}

  next(): Promise<IteratorResult<ModelEvent, undefined>> {
    if (this.done) return Promise.resolve({ value: undefined, done: true });
    if (!this.inner) {
      if (this.signal.aborted) return Promise.resolve(this.finishResult());
      const retryAfterMs = this.guard.breaker.admit();
      if (retryAfterMs !== null) {
        this.done = true;
        return Promise.reject(this.guard.refusal(retryAfterMs));
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
      this.guard.breaker.onAnswer();
    }
    if (result.value.type === 'text') this.tokens += result.value.tokens ?? 1;
    return result;
  };

  private readonly onError = (error: unknown): never => {
    this.done = true;
    if (error instanceof ProviderError) this.guard.failed(error, this.tokens);
    else this.guard.breaker.onAbandon();
    throw error;
  };

  /** Ended without an error: healthy if it had answered, else it said nothing about health. */
  private finishResult(): IteratorResult<ModelEvent, undefined> {
    if (!this.done && this.inner) {
      if (this.answered) this.guard.breaker.onSuccess();
      else this.guard.breaker.onAbandon();
    }
    this.done = true;
    return { value: undefined, done: true };
  }
}
