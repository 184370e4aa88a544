import { describe, expect, it } from 'vitest';
import { providerErrorFromWire, retryAfterMsFromHeaders } from './providerErrorFromWire';
import { readResponsesEvent } from './readResponsesEvent';

describe('providerErrorFromWire', () => {
  it.each([
    [{ status: 401 }, 'auth'],
    [{ status: 403 }, 'auth'],
    [{ status: 402 }, 'quota'],
    [{ status: 404 }, 'not_configured'],
    [{ status: 429 }, 'rate_limited'],
    [{ status: 429, code: 'insufficient_quota' }, 'quota'],
    [{ status: 429, type: 'insufficient_quota' }, 'quota'],
    [{ status: 400, code: 'context_length_exceeded' }, 'context_length'],
    [{ status: 400, code: 'invalid_value' }, 'bad_response'],
    [{ status: 500 }, 'overloaded'],
    [{ status: 529, type: 'overloaded_error' }, 'overloaded'],
    [{ code: 'server_error' }, 'overloaded'],
    [{}, 'overloaded'],
  ] as const)('classifies %o as %s by status and code, never by message', (failure, code) => {
    expect(providerErrorFromWire({ ...failure, message: 'context length quota auth' }, 'p').code).toBe(code);
  });

  it('keeps retryAfterMs only for rate limits, and the wire code for adapters that recover', () => {
    expect(providerErrorFromWire({ status: 429, retryAfterMs: 10 }, 'p').retryAfterMs).toBe(10);
    expect(providerErrorFromWire({ status: 500, retryAfterMs: 10 }, 'p').retryAfterMs).toBeNull();
    expect(providerErrorFromWire({ status: 400, code: 'previous_response_not_found' }, 'p').wireCode).toBe('previous_response_not_found');
  });

  it('reads retry-after-ms first, then retry-after in seconds or as an HTTP date', () => {
    expect(retryAfterMsFromHeaders({ 'retry-after-ms': '1500.5', 'retry-after': '9' })).toBe(1501);
    expect(retryAfterMsFromHeaders({ 'retry-after': '0.25' })).toBe(250);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMsFromHeaders({ 'retry-after': 'Thu, 01 Jan 2026 00:00:07 GMT' }, now)).toBe(7_000);
    expect(retryAfterMsFromHeaders({ 'retry-after': 'soon' })).toBeNull();
    expect(retryAfterMsFromHeaders({})).toBeNull();
  });
});

describe('readResponsesEvent', () => {
  it('reads an incomplete response cut by max_output_tokens as a length finish with usage', () => {
    const step = readResponsesEvent(
      {
        type: 'response.incomplete',
        response: { id: 'resp_1', incomplete_details: { reason: 'max_output_tokens' }, usage: { input_tokens: 5, output_tokens: 3, input_tokens_details: { cached_tokens: 2 } } },
      },
      'p',
    );
    expect(step).toEqual({ type: 'finished', responseId: 'resp_1', finishReason: 'length', usage: { type: 'usage', inputTokens: 5, outputTokens: 3, cachedInputTokens: 2 } });
  });

  it('reads WebSocket and SSE error events, headers included', () => {
    const ws = readResponsesEvent({ type: 'error', status: 429, error: { code: 'rate_limit_exceeded' }, headers: { 'Retry-After': '2' } }, 'p');
    expect(ws).toMatchObject({ type: 'failed', error: { code: 'rate_limited', retryAfterMs: 2_000 } });
    const sse = readResponsesEvent({ type: 'error', code: 'context_length_exceeded', message: 'too long' }, 'p');
    expect(sse).toMatchObject({ type: 'failed', error: { code: 'context_length' } });
  });

  it('ignores events it has no use for and flags ones that are not events', () => {
    expect(readResponsesEvent({ type: 'response.reasoning_summary_text.delta', delta: 'x' }, 'p')).toEqual({ type: 'ignored' });
    expect(readResponsesEvent({ type: 'response.output_text.delta', delta: 3 }, 'p')).toEqual({ type: 'malformed' });
    expect(readResponsesEvent('nope', 'p')).toEqual({ type: 'malformed' });
  });
});
