/**
 * One streamed HTTP/1.1 POST whose answer is Server-Sent Events, over a kept-alive connection
 * from the provider's pool. Shared by the Chat Completions adapter and the Responses SSE
 * transport. HTTP is spoken here rather than through `node:http`: its client costs a parser
 * callback, a stream push and an event per chunk, which servers send per token (decision 0014).
 */
import { performance } from 'node:perf_hooks';
import type { Connection, ConnectionPool } from './ConnectionPool';
import { HttpParseError, HttpResponseParser, type ResponseHead } from './HttpResponseParser';
import { ProviderError, type ReadPacer } from './ModelProvider';
import { providerErrorFromWire, requestIdFromHeaders, retryAfterMsFromHeaders, wireErrorOf } from './providerErrorFromWire';
import { EventQueue } from './EventQueue';
import { SseDecoder, type SseEvent, type SseSink } from './SseDecoder';

export interface SseRequest {
  url: URL;
  headers: Record<string, string>;
  body: unknown;
  pool: ConnectionPool;
  signal: AbortSignal;
  /** No byte for this long (before or during the answer) fails the request as `network`. */
  idleTimeoutMs: number;
  provider: string;
  /** See `ModelRequest.pacer`: reads may wait for the consumer's next flush. */
  pacer?: ReadPacer;
}

const maxErrorBodyBytes = 64 * 1024;
/** A read at least this large is not held (see `hold`): the stream is fast enough to fill its reads. */
const holdBelowBytes = 16 * 1024;

function transportError(provider: string, reason: string): ProviderError {
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

function certificateError(provider: string, code: string, detail: string): ProviderError {
  return new ProviderError(
    'network',
    `${provider}: its TLS certificate was not accepted (${code}: ${detail}) — check the base URL's host name; for a private certificate authority, start Flint with NODE_EXTRA_CA_CERTS set to its PEM file.`,
    null,
    provider,
  );
}

export class SseStream {
  private readonly decoder = new SseDecoder();
  private readonly parser = new HttpResponseParser();
  private lastByteAt = performance.now();
  private idleTimer: NodeJS.Timeout | null = null;
  /** The socket is paused until the consumer's next flush (see `hold`). */
  private held = false;
  /** Let in by the consumer's flush: the reads until the next turn of the event loop, kept to be read as one. */
  private letInReads: Buffer[] | null = null;
  private head: ResponseHead | null = null;
  /** Some byte of the answer arrived (a reused socket that fails before any is the server's idle close). */
  private heard = false;
  /** Body bytes that came before `read` (with the head, say). */
  private early: Uint8Array[] = [];
  /** The response ended and its socket went back to the pool, or the socket was destroyed. */
  private socketDone = false;
  private complete = false;
  private reader: SseReader | null = null;
  /** The socket failed before `read`: the read fails with this at once. */
  private failedEarly: { error: unknown } | null = null;
  /** Told of the head, of the end of the response, or of a failure before `read`. */
  private waiter: { head(): void; done(): void; fail(error: unknown): void } | null = null;
  private finishing: Promise<void> | null = null;

  private constructor(
    private readonly request: SseRequest,
    private readonly connection: Connection,
    private readonly readOnHead: ((stream: SseStream) => SseReader) | null,
  ) {
    const socket = connection.socket;
    socket.on('data', this.onData);
    socket.on('end', this.onEnd);
    socket.on('close', this.onEnd);
    socket.on('error', this.onError);
  }

  /**
   * Sends the request and waits for the status line. Throws a ProviderError for an error status
   * or a transport failure; returns null when `signal` aborted first.
   *
   * With `readOnHead`, a successful answer is read from the network read that brought its head,
   * by the reader it returns (the stream is then not `read` again): the first events reach the
   * caller in that socket callback, with no promise hop between the head and them (B1).
   */
  static async open(request: SseRequest, readOnHead?: (stream: SseStream) => SseReader): Promise<SseStream | null> {
    // A kept-alive socket can be closed by the server just as we reuse it; retrying once, on a
    // new connection, is safe because the server answered nothing (it processed nothing).
    for (let attempt = 0; ; attempt++) {
      if (request.signal.aborted) return null;
      try {
        return await SseStream.openOnce(request, attempt > 0, readOnHead ?? null);
      } catch (error) {
        if (request.signal.aborted) return null;
        if (error instanceof StaleSocketError && attempt === 0) continue;
        if (error instanceof ProviderError) throw error;
        if (error instanceof HttpParseError) throw transportError(request.provider, `the server's answer is not HTTP/1.1 (${error.message})`);
        const code = (error as NodeJS.ErrnoException).code;
        if (code && certificateErrors.has(code)) throw certificateError(request.provider, code, (error as Error).message);
        throw transportError(request.provider, `request failed (${code ?? 'no code'})`);
      }
    }
  }

  private static async openOnce(request: SseRequest, fresh: boolean, readOnHead: ((stream: SseStream) => SseReader) | null): Promise<SseStream> {
    const body = JSON.stringify(request.body);
    // Built first: a bad header fails the request before any socket or waiter exists.
    const wire = requestHead(request, Buffer.byteLength(body)) + body;
    // On an idle connection the request is written at once, before anything else here, and
    // without an await: it leaves ahead of the caller's own work after `open` (a turn's first
    // status, the prompt's reply), and the model's time to first token starts that much sooner.
    // No byte of the answer can arrive before this turn of the event loop ends, by when the
    // stream listens.
    const idle = fresh ? null : request.pool.sendOnIdle(request.url, wire);
    const timer = new AbortController();
    const timeout = setTimeout(() => timer.abort(), request.idleTimeoutMs);
    const onAbort = () => timer.abort();
    request.signal.addEventListener('abort', onAbort, { once: true });
    let stream: SseStream | null = null;
    try {
      const connection =
        idle ??
        (await request.pool.connect(request.url, timer.signal).catch((error: unknown) => {
          if (timer.signal.aborted && !request.signal.aborted) throw transportError(request.provider, `no answer within ${request.idleTimeoutMs} ms`);
          throw error;
        }));
      stream = new SseStream(request, connection, readOnHead);
      const answered = stream.untilHead();
      if (!idle) connection.socket.write(wire);
      timer.signal.addEventListener('abort', () => stream?.stop(request.signal.aborted ? null : transportError(request.provider, `no answer within ${request.idleTimeoutMs} ms`)), { once: true });
      await answered;
    } catch (error) {
      stream?.destroy();
      throw error;
    } finally {
      clearTimeout(timeout);
      request.signal.removeEventListener('abort', onAbort);
    }
    const status = stream.head!.status;
    if (status < 200 || status >= 300) {
      const failure = await stream.failure(status);
      throw failure;
    }
    request.signal.addEventListener('abort', stream.onAbort, { once: true });
    return stream;
  }

  private untilHead(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiter = {
        head: () => {
          this.waiter = null;
          resolve();
        },
        done: resolve,
        fail: reject,
      };
    });
  }

  /** Reads an error answer's body (bounded like the stream) and classifies it. */
  private async failure(status: number): Promise<ProviderError> {
    const chunks: Uint8Array[] = [...this.early];
    this.early = [];
    let bytes = chunks.reduce((n, c) => n + c.length, 0);
    if (!this.complete && !this.socketDone) {
      const timer = setTimeout(() => this.destroy(), this.request.idleTimeoutMs);
      const onAbort = () => this.destroy();
      this.request.signal.addEventListener('abort', onAbort, { once: true });
      try {
        await new Promise<void>((resolve) => {
          this.waiter = { head: () => undefined, done: resolve, fail: () => resolve() };
          this.reader = null;
          this.collect = (piece) => {
            if (bytes >= maxErrorBodyBytes) return;
            chunks.push(piece);
            bytes += piece.length;
          };
        });
      } finally {
        clearTimeout(timer);
        this.request.signal.removeEventListener('abort', onAbort);
        this.collect = null;
      }
    }
    let parsed: unknown = null;
    try {
      parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      // Not JSON (a proxy's HTML page), or cut short: the status alone decides.
    }
    const { headers } = this.head!;
    return providerErrorFromWire({ status, ...wireErrorOf(parsed), retryAfterMs: retryAfterMsFromHeaders(headers), requestId: requestIdFromHeaders(headers) }, this.request.provider);
  }

  private collect: ((piece: Uint8Array) => void) | null = null;

  /** The provider's id for this request (its `x-request-id`), once the answer's head came. */
  get requestId(): string | null {
    return this.head && requestIdFromHeaders(this.head.headers);
  }

  /**
   * Reads the response, handing its decoded events to `reader` as each network read completes
   * them, then `readEnd()` (a fast stream's read holds many events: a caller handles what they
   * say together, once per read). Ends when the server ends the response; fails with
   * `network` on a reset, a body cut short or the idle timeout; ends quietly once the signal
   * aborts. Stops delivering at `finish()`. A callback that throws destroys the response and
   * fails the read with what it threw.
   */
  read(reader: SseReader): void {
    this.reader = reader;
    this.armIdleTimer();
    const early = this.early;
    this.early = [];
    if (early.length > 0) this.deliver(early);
    if (this.complete) this.settle(null);
    else if (this.failedEarly) this.settle(this.failedEarly.error);
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
   * arrive so the socket returns to the pool, closing it instead after `graceMs`. Resolves once
   * the socket is settled either way; safe to call more than once.
   */
  finish(graceMs = 1_000): Promise<void> {
    this.request.signal.removeEventListener('abort', this.onAbort);
    this.reader = null;
    this.disarmIdleTimer();
    if (this.finishing) return this.finishing;
    if (this.socketDone) return (this.finishing = Promise.resolve());
    this.unhold();
    this.finishing = new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.destroy(), graceMs);
      this.waiter = {
        head: () => undefined,
        done: () => {
          clearTimeout(timer);
          resolve();
        },
        fail: () => {
          clearTimeout(timer);
          resolve();
        },
      };
    });
    return this.finishing;
  }

  /**
   * Stops now, delivering nothing more; closing the connection is what tells the provider to
   * stop generating.
   */
  destroy(): void {
    this.reader = null;
    this.stop(null);
  }

  /** Closes the connection; a read still attached is told (`end` once aborted, else `fail`). */
  private stop(error: unknown): void {
    this.request.signal.removeEventListener('abort', this.onAbort);
    this.disarmIdleTimer();
    this.unhold();
    if (this.socketDone) return;
    this.detach();
    this.connection.socket.destroy();
    this.failed(error);
  }

  private readonly onAbort = (): void => this.stop(null);

  private readonly onData = (data: Buffer): void => {
    this.lastByteAt = performance.now();
    this.heard = true;
    if (this.letInReads) this.letInReads.push(data);
    else this.onRead(data);
  };

  private onRead(data: Buffer): void {
    let parsed;
    try {
      parsed = this.parser.push(data);
    } catch (error) {
      this.stop(error);
      return;
    }
    if (parsed.head) {
      this.head = parsed.head;
      const { status } = parsed.head;
      if (this.readOnHead && status >= 200 && status < 300) this.read(this.readOnHead(this));
      this.waiter?.head();
    }
    if (parsed.body.length > 0) {
      if (this.reader) this.deliver(parsed.body);
      else if (this.collect) for (const piece of parsed.body) this.collect(piece);
      else this.early.push(...parsed.body);
    }
    if (parsed.complete) this.completed();
    else if (this.reader && data.length < holdBelowBytes) this.hold();
  }

  private readonly onEnd = (): void => {
    this.readLetIn();
    if (this.socketDone) return;
    if (this.head && this.parser.endsAtClose) return this.completed();
    const error = this.head === null && this.connection.reused && !this.heard ? new StaleSocketError() : transportError(this.request.provider, this.head ? 'the connection broke mid-stream' : 'the connection closed before an answer');
    this.detach();
    this.connection.socket.destroy();
    this.failed(error);
  };

  private readonly onError = (error: Error): void => {
    this.readLetIn();
    if (this.socketDone) return;
    const stale = this.head === null && this.connection.reused && !this.heard && ['ECONNRESET', 'EPIPE'].includes((error as NodeJS.ErrnoException).code ?? '');
    this.detach();
    this.connection.socket.destroy();
    this.failed(stale ? new StaleSocketError() : error);
  };

  /** Body pieces, decoded in order: one network read's, or all that came before the reader. It hears of their end once. */
  private deliver(pieces: readonly Uint8Array[]): void {
    const reader = this.reader!;
    try {
      for (const piece of pieces) if (this.reader) this.decoder.decode(piece, reader);
      if (this.reader) reader.readEnd();
    } catch (error) {
      this.destroy();
      this.reader = reader;
      this.settle(error, true);
    }
  }

  /** The response ended: its socket goes back to the pool (or is closed), and the read ends. */
  private completed(): void {
    this.complete = true;
    this.socketDone = true;
    this.unhold();
    this.detach();
    if (this.head?.keepAlive) this.request.pool.release(this.request.url, this.connection.socket);
    else this.connection.socket.destroy();
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.done();
    if (this.reader) this.settle(null);
  }

  /** The socket failed or was destroyed: whoever waits is told. */
  private failed(error: unknown): void {
    this.socketDone = true;
    const waiter = this.waiter;
    this.waiter = null;
    if (waiter) {
      if (this.head === null) waiter.fail(error ?? new Error('the request was stopped'));
      else waiter.done();
    }
    if (this.reader) this.settle(error);
    else this.failedEarly = { error };
  }

  private settle(error: unknown, thrownByReader = false): void {
    const reader = this.reader;
    if (!reader) return;
    this.reader = null;
    this.disarmIdleTimer();
    if (this.request.signal.aborted) return reader.end();
    if (error === null) {
      this.decoder.end();
      return reader.end();
    }
    if (thrownByReader || error instanceof ProviderError) return reader.fail(error);
    reader.fail(transportError(this.request.provider, 'the connection broke mid-stream'));
  }

  /**
   * Leaves the socket unread until the consumer's next flush, which lets it in itself: what came
   * meanwhile is read in one go. A server that writes every token (or every millisecond) costs a
   * wake-up, a read and a decode each; held, one per consumer flush (decisions 0014, 0015).
   */
  private hold(): void {
    if (this.held || !this.request.pacer?.holdUntilFlush(this.letIn)) return;
    this.held = true;
    this.connection.socket.pause();
  }

  /**
   * The consumer's flush lets the socket in. Over TLS what one socket read brings reaches us as a
   * chunk per record, so the reads until this turn of the event loop's I/O is over are kept and
   * read as one (`setImmediate`). This immediate is queued before the flush's own, which the
   * consumer queues after letting its reads in, so the flush has the text (decision 0015).
   */
  private readonly letIn = (): void => {
    if (!this.held) return;
    this.letInReads = [];
    setImmediate(this.readLetIn);
    this.unhold();
  };

  private readonly readLetIn = (): void => {
    const reads = this.letInReads;
    this.letInReads = null;
    // Stopped meanwhile: nothing more is read.
    if (this.socketDone || !reads || reads.length === 0) return;
    this.onRead(reads.length === 1 ? reads[0]! : Buffer.concat(reads));
  };

  /** Reads on (the consumer's flush is due, or the response is over); a no-op unless held. */
  private readonly unhold = (): void => {
    if (!this.held) return;
    this.held = false;
    if (!this.socketDone) this.connection.socket.resume();
  };

  private detach(): void {
    const { socket } = this.connection;
    socket.off('data', this.onData);
    socket.off('end', this.onEnd);
    socket.off('close', this.onEnd);
    socket.off('error', this.onError);
  }

  private armIdleTimer(): void {
    const check = () => {
      const idleMs = performance.now() - this.lastByteAt;
      if (idleMs >= this.request.idleTimeoutMs) {
        this.idleTimer = null;
        this.stop(transportError(this.request.provider, `no data for ${this.request.idleTimeoutMs} ms`));
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

/** A header name (RFC 9110 token) and a value without control characters but tab. */
const headerName = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const badHeaderValue = /[^\t\x20-\x7e\x80-\xff]/;

/** The request line and headers: names merged case-insensitively (the body's own framing last), values checked. */
function requestHead(request: SseRequest, contentLength: number): string {
  const { url } = request;
  const headers = new Map<string, [string, string]>();
  const set = (name: string, value: string) => headers.set(name.toLowerCase(), [name, value]);
  set('host', url.host);
  for (const [name, value] of Object.entries(request.headers)) set(name, value);
  set('accept', 'text/event-stream');
  set('content-type', 'application/json');
  set('content-length', String(contentLength));
  let head = `POST ${url.pathname}${url.search} HTTP/1.1\r\n`;
  for (const [name, value] of headers.values()) {
    if (!headerName.test(name) || badHeaderValue.test(value)) {
      throw new ProviderError('not_configured', `${request.provider}: the header ${JSON.stringify(name)} has characters HTTP does not allow — fix the provider configuration.`, null, request.provider);
    }
    head += `${name}: ${value}\r\n`;
  }
  return `${head}\r\n`;
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
