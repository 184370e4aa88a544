/**
 * Turns what a provider said about a failure (HTTP status, headers, the `error` object of an
 * OpenAI-style body or event) into a typed ProviderError. Classification uses the status and the
 * machine-readable `code` / `type` fields only; the message is passed through for people.
 */
import { ProviderError, type ProviderErrorCode, type ProviderErrorDetails } from '../core/ports/ModelProvider';

export interface WireFailure {
  /** HTTP status, or the `status` an error event carries (Responses WebSocket); absent mid-stream. */
  status?: number;
  /** OpenAI-style `error.code`, e.g. "insufficient_quota", "context_length_exceeded". */
  code?: string | null;
  /** OpenAI-style `error.type`, e.g. "insufficient_quota", "rate_limit_error". */
  type?: string | null;
  message?: string | null;
  retryAfterMs?: number | null;
  /** The provider's id for the request (see `requestIdFromHeaders`). */
  requestId?: string | null;
}

const byCode: Record<string, ProviderErrorCode> = {
  insufficient_quota: 'quota',
  billing_hard_limit_reached: 'quota',
  context_length_exceeded: 'context_length',
  string_above_max_length: 'context_length',
  rate_limit_exceeded: 'rate_limited',
  rate_limit_error: 'rate_limited',
  invalid_api_key: 'auth',
  authentication_error: 'auth',
  permission_error: 'auth',
  server_error: 'overloaded',
  overloaded_error: 'overloaded',
  api_error: 'overloaded',
};

function codeFromStatus(status: number): ProviderErrorCode {
  if (status === 401 || status === 403) return 'auth';
  if (status === 402) return 'quota';
  if (status === 404) return 'not_configured';
  if (status === 408) return 'network';
  if (status === 413) return 'context_length';
  if (status === 429) return 'rate_limited';
  if (status >= 500) return 'overloaded';
  // Another 4xx: we sent something the provider rejects; no retry will fix it.
  return 'bad_response';
}

/** The ProviderError for a failure; specific codes win over the status they arrive with. */
export function providerErrorFromWire(failure: WireFailure, provider: string): WireProviderError {
  const specific = (failure.code && byCode[failure.code]) || (failure.type && byCode[failure.type]) || null;
  // An error event mid-stream without a status or a known code: the provider broke off.
  const code = specific ?? (failure.status === undefined ? 'overloaded' : codeFromStatus(failure.status));
  const status = failure.status === undefined ? '' : ` (HTTP ${failure.status})`;
  const detail = failure.message ? `: ${failure.message}` : '';
  const message = `${provider}${status}${detail}${hint[code]}`;
  const retryAfterMs = code === 'rate_limited' ? (failure.retryAfterMs ?? null) : null;
  return new WireProviderError(code, message, retryAfterMs, provider, failure.code ?? null, { status: failure.status, requestId: failure.requestId });
}

/**
 * A ProviderError that keeps the provider's own error code, for the few codes an adapter
 * recovers from itself (e.g. `previous_response_not_found`: resend the full input).
 */
export class WireProviderError extends ProviderError {
  constructor(
    code: ProviderErrorCode,
    message: string,
    retryAfterMs: number | null,
    provider: string,
    readonly wireCode: string | null,
    details: ProviderErrorDetails = {},
  ) {
    super(code, message, retryAfterMs, provider, details);
  }
}

const hint: Record<ProviderErrorCode, string> = {
  not_configured: ' — check the base URL and the model name.',
  auth: ' — check the API key configured on the gateway.',
  rate_limited: ' — the provider is rate limiting; try again shortly.',
  quota: ' — the account has no quota left; add credit or switch provider.',
  context_length: ' — the prompt is too long for this model; trim the context.',
  overloaded: ' — the provider is failing or overloaded; try again shortly.',
  network: '',
  bad_response: '',
  circuit_open: '',
};

type HeaderBag = Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * When to retry, from `retry-after-ms` (OpenAI, milliseconds) or `retry-after` (seconds or an
 * HTTP date). `nowMs` is only needed for the date form.
 */
export function retryAfterMsFromHeaders(headers: HeaderBag, nowMs: number = Date.now()): number | null {
  const ms = Number.parseFloat(header(headers, 'retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms >= 0) return Math.ceil(ms);
  const after = header(headers, 'retry-after');
  if (after === undefined) return null;
  const seconds = Number(after);
  if (after.trim() !== '' && Number.isFinite(seconds)) return Math.max(0, Math.ceil(seconds * 1000));
  const date = Date.parse(after);
  return Number.isNaN(date) ? null : Math.max(0, date - nowMs);
}

/**
 * The provider's id for a request, from its answer's `x-request-id` header (OpenAI, Groq,
 * Cerebras, vLLM with request ids on): what its support desk asks for.
 */
export function requestIdFromHeaders(headers: HeaderBag): string | null {
  return header(headers, 'x-request-id') || null;
}

/** The `error` object of an OpenAI-style JSON body (`{error: {code, type, message}}`), if any. */
export function wireErrorOf(body: unknown): { code?: string; type?: string; message?: string } | null {
  if (typeof body !== 'object' || body === null) return null;
  const error = (body as { error?: unknown }).error;
  if (typeof error === 'string') return { message: error };
  if (typeof error !== 'object' || error === null) return null;
  const { code, type, message } = error as Record<string, unknown>;
  return {
    code: typeof code === 'string' ? code : undefined,
    type: typeof type === 'string' ? type : undefined,
    message: typeof message === 'string' ? message : undefined,
  };
}
