/**
 * One streamed HTTP POST whose answer is Server-Sent Events, over a keep-alive agent the provider
 * owns. Shared by the Chat Completions adapter and the Responses SSE transport.
 */
import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import { ProviderError } from './ModelProvider';
import { providerErrorFromWire, retryAfterMsFromHeaders, wireErrorOf } from './providerErrorFromWire';
import { EventQueue } from './EventQueue';
import { SseDecoder, type SseEvent, type SseSink } from './SseDecoder';

export interface SseRequest {
  url: URL;
  headers: Record<string, string>;
  body: unknown;
  agent: http.Agent;
  signal: AbortSignal;
  /** No byte for this long (before or during the answer) fails the request as `network`. */
  idleTimeoutMs: number;
  provider: string;
}

const maxErrorBodyBytes = 64 * 1024;

/** A keep-alive agent for `url`'s scheme; LIFO so the warmest socket is reused first. */
export function keepAliveAgentFor(url: URL): http.Agent {
  const options = { keepAlive: true, scheduling: 'lifo' as const };
  return url.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
}

function transportError(provider: string, reason: string): ProviderError {
  return new ProviderError('network', `${provider}: ${reason} — check the network and the base URL.`, null, provider);
}

export class SseStream {
  private readonly decoder = new SseDecoder();
  private lastByteAt = performance.now();
  private idleTimer: NodeJS.Timeout | null = null;
  private requestClosed = false;
  private finishing: Promise<void> | null = null;
  /** Detaches `read`'s listeners (and the idle timer): set while a read is attached. */
  private stopReading: () => void = () => this.disarmIdleTimer();

  private constructor(
    private readonly request: SseRequest,
    private readonly req: http.ClientRequest,
    private readonly res: http.IncomingMessage,
  ) {
    req.once('close', () => {
      this.requestClosed = true;
    });
  }

  /**
   * Sends the request and waits for the status line. Throws a ProviderError for an error status
   * or a transport failure; returns null when `signal` aborted first.
   */
  static async open(request: SseRequest): Promise<SseStream | null> {
    // A kept-alive socket can be closed by the server just as we reuse it; Node documents
    // retrying once in that case, which is safe because the server received nothing.
    for (let attempt = 0; ; attempt++) {
      if (request.signal.aborted) return null;
      try {
        return await SseStream.openOnce(request);
      } catch (error) {
        if (request.signal.aborted) return null;
        if (error instanceof StaleSocketError && attempt === 0) continue;
        if (error instanceof ProviderError) throw error;
        throw transportError(request.provider, `request failed (${(error as NodeJS.ErrnoException).code ?? 'no code'})`);
      }
    }
  }

  private static async openOnce(request: SseRequest): Promise<SseStream> {
    const body = JSON.stringify(request.body);
    const transport = request.url.protocol === 'https:' ? https : http;
    // Not `signal:` on the request: that destroys it with an AbortError the response re-emits
    // after the caller stopped listening. Aborting here destroys quietly.
    const req = transport.request(request.url, {
      method: 'POST',
      agent: request.agent,
      headers: {
        ...request.headers,
        accept: 'text/event-stream',
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      },
    });
    const onAbort = () => req.destroy();
    request.signal.addEventListener('abort', onAbort, { once: true });
    const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const timer = setTimeout(() => {
        req.destroy(transportError(request.provider, `no answer within ${request.idleTimeoutMs} ms`));
      }, request.idleTimeoutMs);
      req.once('response', (response) => {
        clearTimeout(timer);
        resolve(response);
      });
      req.once('error', (error: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        reject(req.reusedSocket && error.code === 'ECONNRESET' ? new StaleSocketError() : error);
      });
      req.end(body);
    }).catch((error: unknown) => {
      request.signal.removeEventListener('abort', onAbort);
      throw error;
    });
    // Errors after the status line reach the reader through the response's iterator; these
    // listeners only keep them from also being "unhandled" events.
    req.on('error', () => undefined);
    res.on('error', () => undefined);
    const status = res.statusCode ?? 0;
    if (status < 200 || status >= 300) {
      // Bounded like the stream: a server that sends a status and then stalls must not hang us.
      const timer = setTimeout(() => res.destroy(), request.idleTimeoutMs);
      try {
        throw await SseStream.failure(request, res, status);
      } finally {
        clearTimeout(timer);
        request.signal.removeEventListener('abort', onAbort);
      }
    }
    const stream = new SseStream(request, req, res);
    request.signal.removeEventListener('abort', onAbort);
    request.signal.addEventListener('abort', stream.onAbort, { once: true });
    return stream;
  }

  private static async failure(request: SseRequest, res: http.IncomingMessage, status: number): Promise<ProviderError> {
    let text = '';
    try {
      for await (const chunk of res as AsyncIterable<Buffer>) {
        if (text.length < maxErrorBodyBytes) text += chunk.toString('utf8');
      }
    } catch {
      // A body cut short still leaves the status to classify by.
    }
    let parsed: unknown = null;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON (a proxy's HTML page): the status alone decides.
    }
    const wire = wireErrorOf(parsed);
    return providerErrorFromWire(
      { status, ...wire, retryAfterMs: retryAfterMsFromHeaders(res.headers) },
      request.provider,
    );
  }

  /**
   * Reads the response, handing its decoded events to `reader` as each network read completes
   * them, then `readEnd()` (a fast stream's read holds many events: a caller handles what they
   * say together, once per read). Ends when the server
   * ends the response; fails with `network` on a reset, a body cut short or the idle timeout;
   * ends quietly once the signal aborts. Stops delivering at `finish()`. A callback that throws
   * destroys the response and fails the read with what it threw.
   */
  read(reader: SseReader): void {
    const res = this.res;
    let settled = false;
    const settle = (error: unknown, thrownByReader = false): void => {
      if (settled) return;
      settled = true;
      this.stopReading();
      if (this.request.signal.aborted) return reader.end();
      if (error === null) {
        this.decoder.end();
        return reader.end();
      }
      if (thrownByReader || error instanceof ProviderError) return reader.fail(error);
      reader.fail(transportError(this.request.provider, 'the connection broke mid-stream'));
    };
    const onData = (chunk: Buffer): void => {
      this.lastByteAt = performance.now();
      try {
        this.decoder.decode(chunk, reader);
        if (!settled) reader.readEnd();
      } catch (error) {
        this.destroy();
        settle(error, true);
      }
    };
    const onEnd = (): void => settle(null);
    const onError = (error: unknown): void => settle(error);
    const onClose = (): void => settle(res.complete ? null : new Error('the response closed before its end'));
    res.on('data', onData);
    res.on('end', onEnd);
    res.on('error', onError);
    res.on('close', onClose);
    this.stopReading = () => {
      settled = true;
      res.off('data', onData);
      res.off('end', onEnd);
      res.off('error', onError);
      res.off('close', onClose);
      this.disarmIdleTimer();
    };
    this.armIdleTimer();
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
   * The caller read the stream's final event: lets the rest of the body (the chunked terminator)
   * drain so the socket returns to the keep-alive pool, closing it instead after `graceMs`.
   * Resolves once the socket is settled either way; safe to call more than once.
   */
  finish(graceMs = 1_000): Promise<void> {
    this.request.signal.removeEventListener('abort', this.onAbort);
    this.stopReading();
    if (this.finishing) return this.finishing;
    if (this.requestClosed) return (this.finishing = Promise.resolve());
    this.finishing = new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.res.destroy();
        this.req.destroy();
      }, graceMs);
      // The request's 'close' comes just before the agent takes the socket back ('free'), so
      // the caller's next request finds it idle instead of opening another connection.
      this.req.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      this.res.resume();
    });
    return this.finishing;
  }

  /** Stops now; closing the connection is what tells the provider to stop generating. */
  destroy(): void {
    this.request.signal.removeEventListener('abort', this.onAbort);
    this.disarmIdleTimer();
    if (!this.res.complete) {
      this.res.destroy();
      this.req.destroy();
    }
  }

  private readonly onAbort = (): void => this.destroy();

  private armIdleTimer(): void {
    const check = () => {
      const idleMs = performance.now() - this.lastByteAt;
      if (idleMs >= this.request.idleTimeoutMs) {
        this.idleTimer = null;
        this.res.destroy(transportError(this.request.provider, `no data for ${this.request.idleTimeoutMs} ms`));
        return;
      }
      // One timer per idle window rather than one per chunk: chunks only stamp a time.
      this.idleTimer = setTimeout(check, this.request.idleTimeoutMs - idleMs);
    };
    this.lastByteAt = performance.now();
    this.idleTimer = setTimeout(check, this.request.idleTimeoutMs);
  }

  private disarmIdleTimer(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }
}

class StaleSocketError extends Error {}

/** Where `SseStream.read` delivers; see there. */
export interface SseReader extends SseSink {
  /** The events of one network read were delivered (there may have been none). */
  readEnd(): void;
  /** The server ended the response, or the signal aborted. */
  end(): void;
  /** A `network` ProviderError, or what a callback threw. */
  fail(error: unknown): void;
}
