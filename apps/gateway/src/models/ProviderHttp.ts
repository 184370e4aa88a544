/**
 * How the gateway speaks HTTP to model providers: undici (the engine of Node's own `fetch`), one
 * dispatcher per provider, and SSE answers read with eventsource-parser. What a deployment needs
 * comes from the library: kept-alive connections per origin (bounded), HTTP/2 where the endpoint
 * offers it (ALPN, through a proxy too), the proxy `proxyForUrl` picks, redirects (credentials
 * are not carried to another origin), and no retry of a POST that may have reached the server:
 * a generation is never started twice. Compressed bodies (gzip, brotli, deflate) are decoded with
 * Node's zlib (decision 0021).
 */
import zlib from 'node:zlib';
import { Agent, interceptors, type Dispatcher } from 'undici';
import { createParser } from 'eventsource-parser';
import { ProviderError } from '../core/ports/ModelProvider';
import { providerErrorFromWire, requestIdFromHeaders, retryAfterMsFromHeaders, wireErrorOf } from './providerErrorFromWire';
import { EventQueue } from './EventQueue';
import { ProxyChoosingAgent } from './ProxyChoosingAgent';
import { anyProxyConfigured, ProxyConfigError, type ProxyEnv } from './proxyForUrl';

export interface ProviderHttpOptions {
  /** Certificate authorities to trust instead of Node's (a private CA, the tests' certificate). */
  ca?: string | Buffer;
  /**
   * Connections per origin. A streamed answer holds its HTTP/1.1 connection for as long as it
   * streams, so this bounds the concurrent turns and completions of one gateway against one
   * endpoint over HTTP/1.1 (past it they wait); over HTTP/2 they share a connection. Default 1024.
   */
  connectionsPerOrigin?: number;
  /**
   * The DNS lookup for direct connections (net/tls `connect`'s `lookup`): a workspace's model
   * connection screens the addresses there (modelAddressPolicy). Through a proxy, the proxy resolves.
   */
  lookup?: import('node:net').LookupFunction;
  /** Follow redirects (up to 3); default true. A workspace's model connection follows none. */
  followRedirects?: boolean;
}

/**
 * A provider's HTTP client. Each origin is reached through the proxy `proxyForUrl` picks for it
 * from `env` as it was when the client was made (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`,
 * `NO_PROXY`, lower case too, as curl reads them) — the same decision the Responses WebSocket
 * takes — or directly. HTTP/2 is offered by ALPN either way: through a proxy, inside the tunnel.
 */
export function providerDispatcher(options: ProviderHttpOptions = {}, env: ProxyEnv = process.env): Dispatcher {
  const connect = options.ca || options.lookup ? { ...(options.ca ? { ca: options.ca } : {}), ...(options.lookup ? { lookup: options.lookup } : {}) } : undefined;
  const settings: Agent.Options = { allowH2: true, connections: options.connectionsPerOrigin ?? 1024, connect };
  // Without a proxy variable, no proxy layer: it costs ~55 µs before a request leaves an idle
  // gateway (decision 0021).
  const agent = anyProxyConfigured(env) ? new ProxyChoosingAgent(settings, { ...env }) : new Agent(settings);
  return options.followRedirects === false ? agent : agent.compose(interceptors.redirect({ maxRedirections: 3 }));
}

/**
 * Bodies are decompressed here, by Node's zlib, rather than by undici's decompress interceptor:
 * that one is experimental in undici 7 and warns so on every start.
 */
const decompressors: Record<string, { stream(): Decompressor; whole(body: Buffer): Buffer }> = {
  gzip: { stream: () => zlib.createGunzip(), whole: (body) => zlib.gunzipSync(body) },
  'x-gzip': { stream: () => zlib.createGunzip(), whole: (body) => zlib.gunzipSync(body) },
  br: { stream: () => zlib.createBrotliDecompress(), whole: (body) => zlib.brotliDecompressSync(body) },
  deflate: { stream: () => zlib.createInflate(), whole: (body) => zlib.inflateSync(body) },
};

type Decompressor = zlib.Gunzip | zlib.BrotliDecompress | zlib.Inflate;
type Headers = Record<string, string | string[] | undefined>;

/** How the answer's body is compressed, if in a way we decode. */
function decompressorOf(headers: Headers): (typeof decompressors)[string] | null {
  const header = headers['content-encoding'];
  return decompressors[String(Array.isArray(header) ? header[0] : (header ?? '')).trim().toLowerCase()] ?? null;
}

/** Closes a provider's connections; safe to call more than once. */
export async function closeDispatcher(dispatcher: Dispatcher): Promise<void> {
  if (closed.has(dispatcher)) return;
  closed.add(dispatcher);
  await dispatcher.close();
}
const closed = new WeakSet<Dispatcher>();

/** One server-sent event: its `event:` field ('' for none) and its data. */
export interface SseEvent {
  event: string;
  data: string;
}

/**
 * An SSE body's bytes, read by read, to its events: UTF-8 decoded (a character split between
 * reads is decoded whole with the next), then eventsource-parser.
 */
export function sseDecoder(onEvent: (event: SseEvent) => void): (bytes: Uint8Array) => void {
  const parser = createParser({ onEvent: (event) => onEvent({ event: event.event ?? '', data: event.data }) });
  const utf8 = new TextDecoder();
  return (bytes) => parser.feed(utf8.decode(bytes, { stream: true }));
}

export interface SseRequest {
  url: URL;
  headers: Record<string, string>;
  body: unknown;
  dispatcher: Dispatcher;
  signal: AbortSignal;
  /** No byte for this long (before or during the answer) fails the request as `network`. */
  idleTimeoutMs: number;
  provider: string;
}

/** Where `SseResponse.read` delivers. */
export interface SseReader {
  /** One decoded event; a fast stream's network read holds many. */
  event(event: SseEvent): void;
  /** The events of one network read were delivered (there may have been none). */
  readEnd(): void;
  /** The server ended the response, or the signal aborted. */
  end(): void;
  /** A `network` ProviderError, or what a callback threw. */
  fail(error: unknown): void;
}

const maxErrorBodyBytes = 64 * 1024;

/**
 * One streamed POST whose answer is Server-Sent Events, on undici's `dispatch` with a handler:
 * its callbacks run in the socket's own read, so events are decoded there — no body stream, no
 * promise between a read and its events (decision 0021).
 */
export class SseResponse {
  private reader: SseReader | null = null;
  private finishing: { promise: Promise<void>; done(): void } | null = null;
  private controller: Dispatcher.DispatchController | null = null;
  private headers: Headers = {};
  /** Body bytes (decoded) that came before `read`. */
  private early: Buffer[] = [];
  /** The response ended (`null`) or failed before `read`: `read` reports it at once. */
  private settled: { error: unknown } | null | undefined = undefined;
  private decompressor: Decompressor | null = null;
  private decode: ((bytes: Uint8Array) => void) | null = null;
  private over = false;

  private constructor(private readonly request: SseRequest) {}

  /**
   * Sends the request and waits for the answer's head. Throws a ProviderError for an error status
   * (its body read, bounded, to classify it) or a transport failure; null when `signal` aborted
   * first. With `readOnHead`, a successful answer is read from the network read that brought its
   * head, by the reader it returns (the first events reach the caller in that callback).
   */
  static open(request: SseRequest, readOnHead?: (response: SseResponse) => SseReader): Promise<SseResponse | null> {
    if (request.signal.aborted) return Promise.resolve(null);
    return new Promise((resolve, reject) => {
      const response = new SseResponse(request);
      const { url, signal } = request;
      let headed = false;
      let errorBody: { status: number; chunks: Buffer[]; bytes: number } | null = null;
      const onAbort = () => response.controller?.abort(new Error('aborted'));
      signal.addEventListener('abort', onAbort, { once: true });
      const done = () => signal.removeEventListener('abort', onAbort);
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart: (controller) => {
          response.controller = controller;
          if (signal.aborted) controller.abort(new Error('aborted'));
        },
        onResponseStart: (_controller, status, headers) => {
          headed = true;
          response.headers = headers as Headers;
          if (status < 200 || status >= 300) {
            errorBody = { status, chunks: [], bytes: 0 };
            return;
          }
          const decompressor = decompressorOf(response.headers)?.stream();
          if (decompressor) response.decompressThrough(decompressor);
          resolve(response);
          if (readOnHead) response.read(readOnHead(response));
        },
        onResponseData: (controller, chunk) => {
          if (errorBody) {
            errorBody.chunks.push(chunk);
            errorBody.bytes += chunk.length;
            if (errorBody.bytes >= maxErrorBodyBytes) controller.abort(new Error('error body too long'));
            return;
          }
          response.received(chunk);
        },
        onResponseEnd: () => {
          done();
          if (errorBody) return reject(failure(request, errorBody.status, response.headers, errorBody.chunks));
          response.ended(null);
        },
        onResponseError: (_controller, error) => {
          done();
          if (errorBody) return signal.aborted ? resolve(null) : reject(failure(request, errorBody.status, response.headers, errorBody.chunks));
          if (!headed) return signal.aborted ? resolve(null) : reject(openFailure(request, error));
          response.ended(signal.aborted ? null : bodyFailure(request, error));
        },
      };
      try {
        request.dispatcher.dispatch(
          {
            origin: url.origin,
            path: `${url.pathname}${url.search}`,
            method: 'POST',
            headers: requestHeaders(request.headers),
            body: JSON.stringify(request.body),
            headersTimeout: request.idleTimeoutMs,
            bodyTimeout: request.idleTimeoutMs,
          },
          handler,
        );
      } catch (error) {
        done();
        reject(openFailure(request, error));
      }
    });
  }

  /** The provider's id for this request (its `x-request-id`). */
  get requestId(): string | null {
    return requestIdFromHeaders(this.headers);
  }

  /**
   * Reads the events, handing them to `reader` as each network read completes them, then
   * `readEnd()` (a caller handles what one read says together). Ends when the server ends the
   * response; fails with `network` on a reset or the idle timeout; ends quietly once the signal
   * aborts. Stops delivering at `finish()` or `destroy()`. A callback that throws destroys the
   * response and fails the read with what it threw.
   */
  read(reader: SseReader): void {
    this.reader = reader;
    this.decode = sseDecoder((event) => this.reader === reader && reader.event(event));
    const early = this.early;
    this.early = [];
    for (const bytes of early) this.deliver(bytes);
    if (this.settled !== undefined) this.settle(this.settled?.error ?? null);
  }

  /** `read` as an async iterator of each read's events (never empty), for callers written as generators. */
  batches(): AsyncIterableIterator<SseEvent[]> {
    let batch: SseEvent[] = [];
    const queue: EventQueue<SseEvent[]> = new EventQueue({
      merge: (queued, next) => queued.concat(next),
      start: () =>
        this.read({
          event: (event) => batch.push(event),
          readEnd: () => {
            if (batch.length === 0) return;
            queue.push(batch);
            batch = [];
          },
          end: () => queue.end(),
          fail: (error) => queue.fail(error),
        }),
    });
    return queue;
  }

  /**
   * The caller read the stream's final event: lets the rest of the body arrive so the connection
   * is kept for the next request, aborting it instead after `graceMs`. Resolves once the response
   * is over either way; safe to call more than once.
   */
  finish(graceMs = 1_000): Promise<void> {
    this.reader = null;
    if (this.finishing) return this.finishing.promise;
    if (this.over) return new Promise((resolve) => afterConnectionFreed(resolve));
    let done = (): void => undefined;
    const promise = new Promise<void>((resolve) => (done = resolve));
    const timer = setTimeout(() => this.controller?.abort(new Error('finished')), graceMs);
    this.finishing = {
      promise,
      done: () => {
        clearTimeout(timer);
        afterConnectionFreed(done);
      },
    };
    return promise;
  }

  /** Stops now, delivering nothing more; closing the request is what tells the provider to stop generating. */
  destroy(): void {
    this.reader = null;
    if (this.over) return;
    this.over = true;
    this.decompressor?.destroy();
    this.controller?.abort(new Error('destroyed'));
  }

  /** A read of the body, as sent (decompressed on the way when it is compressed). */
  private received(chunk: Buffer): void {
    if (this.over) return;
    if (this.decompressor) this.decompressor.write(chunk);
    else this.delivered(chunk);
  }

  private delivered(bytes: Buffer): void {
    if (this.reader) this.deliver(bytes);
    else if (!this.finishing) this.early.push(bytes);
  }

  private deliver(bytes: Buffer): void {
    const reader = this.reader!;
    try {
      this.decode!(bytes);
      if (this.reader === reader) reader.readEnd();
    } catch (error) {
      this.destroy();
      reader.fail(error);
    }
  }

  /** A compressed answer: its reads go through `decompressor`, whose output is the body. */
  private decompressThrough(decompressor: Decompressor): void {
    this.decompressor = decompressor;
    decompressor.on('data', (bytes: Buffer) => this.delivered(bytes));
    decompressor.on('error', (error: Error) => {
      const reader = this.reader;
      this.destroy();
      this.finishing?.done();
      if (reader) reader.fail(bodyFailure(this.request, error));
      else this.settled = { error: bodyFailure(this.request, error) };
    });
  }

  /** The response is over: its end (`null`) or a failure. */
  private ended(error: unknown): void {
    if (this.decompressor && error === null && !this.over) {
      this.decompressor.once('end', () => this.settleOnce(null));
      this.decompressor.end();
      return;
    }
    this.settleOnce(error);
  }

  private settleOnce(error: unknown): void {
    this.over = true;
    this.finishing?.done();
    if (this.reader) this.settle(error);
    else this.settled = error === null ? null : { error };
  }

  private settle(error: unknown): void {
    const reader = this.reader;
    this.reader = null;
    if (!reader) return;
    if (error === null || error === undefined) reader.end();
    else reader.fail(error);
  }
}

/**
 * After a response's end, undici hands its HTTP/1.1 connection back to the pool in an immediate
 * it queues after our callback; a request sent before that would open a second connection.
 */
function afterConnectionFreed(fn: () => void): void {
  setImmediate(() => setImmediate(fn));
}

/** Configured headers merged case-insensitively, the body's own framing last. */
function requestHeaders(configured: Record<string, string>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(configured)) headers[name.toLowerCase()] = value;
  headers.accept = 'text/event-stream';
  headers['content-type'] = 'application/json';
  headers['accept-encoding'] = 'gzip, br, deflate';
  return headers;
}

/** An error answer, classified by its status and its body (bounded; decompressed when it says it is compressed). */
function failure(request: SseRequest, status: number, headers: Headers, chunks: Buffer[]): ProviderError {
  let parsed: unknown = null;
  try {
    const body = Buffer.concat(chunks);
    parsed = JSON.parse((decompressorOf(headers)?.whole(body) ?? body).toString('utf8'));
  } catch {
    // Not JSON (a proxy's HTML page), cut short or undecodable: the status alone decides.
  }
  return providerErrorFromWire({ status, ...wireErrorOf(parsed), retryAfterMs: retryAfterMsFromHeaders(headers), requestId: requestIdFromHeaders(headers) }, request.provider);
}

function networkError(provider: string, reason: string): ProviderError {
  return new ProviderError('network', `${provider}: ${reason} — check the network and the base URL.`, null, provider);
}

/** OpenSSL's and Node's codes for a server certificate the client does not accept. */
const certificateErrors = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException | null)?.code ?? '';
}

/** A failure before the answer's head, as a ProviderError that says what to check. */
function openFailure(request: SseRequest, error: unknown): ProviderError {
  const { provider, idleTimeoutMs } = request;
  if (error instanceof ProviderError) return error;
  if (error instanceof ProxyConfigError) return new ProviderError('not_configured', `${provider}: ${error.message}`, null, provider);
  const code = errorCode(error);
  const message = (error as Error | null)?.message ?? String(error);
  if (certificateErrors.has(code)) {
    return new ProviderError(
      'network',
      `${provider}: its TLS certificate was not accepted (${code}: ${message}) — check the base URL's host name; for a private certificate authority, start Flint with NODE_EXTRA_CA_CERTS set to its PEM file.`,
      null,
      provider,
    );
  }
  if (code === 'UND_ERR_INVALID_ARG') {
    return new ProviderError('not_configured', `${provider}: the request could not be sent (${message}) — fix the provider configuration (its headers or base URL).`, null, provider);
  }
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return networkError(provider, `no answer within ${idleTimeoutMs} ms`);
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return networkError(provider, 'could not connect in time');
  if (code === 'UND_ERR_SOCKET') return networkError(provider, 'the connection closed before an answer');
  if (code.startsWith('HPE_')) return networkError(provider, `the server's answer is not HTTP (${code})`);
  if (/^Proxy response \(\d+\)/.test(message)) return networkError(provider, `the proxy refused to connect to ${request.url.host} (${message})`);
  return networkError(provider, `request failed (${code || message})`);
}

/** A failure while the answer streams. */
function bodyFailure(request: SseRequest, error: unknown): ProviderError {
  const { provider, idleTimeoutMs } = request;
  if (error instanceof ProviderError) return error;
  const code = errorCode(error);
  if (code === 'UND_ERR_BODY_TIMEOUT') return networkError(provider, `no data for ${idleTimeoutMs} ms`);
  if (code.startsWith('Z_') || code.startsWith('ERR_BROTLI') || code.startsWith('ERR__')) {
    return new ProviderError('bad_response', `${provider}: its compressed answer could not be decoded (${code}).`, null, provider);
  }
  return networkError(provider, 'the connection broke mid-stream');
}
