/**
 * Incremental HTTP/1.1 response parsing (RFC 9112) over the bytes of one connection, for the
 * streamed answers of model providers: the status line and headers, then the body by its
 * framing — chunked, Content-Length, or until the connection closes. Bytes may be split
 * anywhere. Body bytes come back per `push` as one piece (the chunks a network read held,
 * without their framing), so a caller decodes a read once rather than once per chunk.
 */

export interface ResponseHead {
  status: number;
  /** Lower-case names; repeated fields joined with ", ". */
  headers: Record<string, string>;
  /** The server keeps the connection open after this response. */
  keepAlive: boolean;
}

export interface ParsedBytes {
  /** The head, in the push that completed it. */
  head: ResponseHead | null;
  /**
   * The body bytes this push held, a piece per chunk of a chunked body (empty: none). Not joined:
   * a fast stream's read holds several chunks, and joining them copied the whole read once more.
   */
  body: Uint8Array[];
  /** The body ended in this push: the connection is free for the next request (if `keepAlive`). */
  complete: boolean;
}

/** Bytes that are not an HTTP/1.1 response: the connection cannot be trusted further. */
export class HttpParseError extends Error {}

const CR = 13;
const LF = 10;
const maxHeadBytes = 64 * 1024;
const maxChunkLineBytes = 4 * 1024;
const empty = new Uint8Array(0);

type State = 'head' | 'chunk-size' | 'chunk-data' | 'chunk-data-end' | 'trailers' | 'length' | 'until-close' | 'done';

export class HttpResponseParser {
  private state: State = 'head';
  /** Bytes of an unfinished head, chunk-size line or trailer line. */
  private carry: Uint8Array = empty;
  /** Body bytes left: of the current chunk, or of a Content-Length body. */
  private remaining = 0;
  private head: ResponseHead | null = null;

  /** A response whose body runs until the connection closes. */
  get endsAtClose(): boolean {
    return this.state === 'until-close';
  }

  push(bytes: Uint8Array): ParsedBytes {
    let data = bytes;
    if (this.carry.length > 0) {
      data = concat([this.carry, bytes]);
      this.carry = empty;
    }
    const pieces: Uint8Array[] = [];
    let head: ResponseHead | null = null;
    let at = 0;
    while (at < data.length && this.state !== 'done') {
      switch (this.state) {
        case 'head': {
          const end = indexOfBlankLine(data, at);
          if (end === -1) {
            if (data.length - at > maxHeadBytes) throw new HttpParseError('response head too large');
            this.carry = data.subarray(at);
            at = data.length;
            break;
          }
          const parsed = parseHead(data.subarray(at, end));
          at = end + 4;
          // Informational answers (100 Continue, 103 Early Hints) precede the real one.
          if (parsed.status >= 100 && parsed.status < 200) break;
          head = parsed;
          this.head = parsed;
          this.startBody(parsed);
          break;
        }
        case 'chunk-size': {
          const lf = this.lineEnd(data, at, 'chunk size line');
          if (lf === -1) {
            at = data.length;
            break;
          }
          const size = chunkSize(data, at, lf);
          at = lf + 1;
          if (size === 0) this.state = 'trailers';
          else {
            this.remaining = size;
            this.state = 'chunk-data';
          }
          break;
        }
        case 'chunk-data':
        case 'length': {
          const take = Math.min(this.remaining, data.length - at);
          pieces.push(data.subarray(at, at + take));
          at += take;
          this.remaining -= take;
          if (this.remaining === 0) this.state = this.state === 'length' ? 'done' : 'chunk-data-end';
          break;
        }
        case 'chunk-data-end': {
          // The CRLF after a chunk's data (a bare LF is tolerated, as by most parsers).
          if (data[at] === CR) {
            if (at + 1 >= data.length) {
              this.carry = data.subarray(at);
              at = data.length;
              break;
            }
            at++;
          }
          if (data[at] !== LF) throw new HttpParseError('chunk data not followed by CRLF');
          at++;
          this.state = 'chunk-size';
          break;
        }
        case 'trailers': {
          const lf = this.lineEnd(data, at, 'trailer line');
          if (lf === -1) {
            at = data.length;
            break;
          }
          const blank = lf === at || (lf === at + 1 && data[at] === CR);
          at = lf + 1;
          if (blank) this.state = 'done';
          break;
        }
        case 'until-close':
          pieces.push(data.subarray(at));
          at = data.length;
          break;
      }
    }
    // Bytes after the response's end (no request was pipelined): this connection is not reused.
    if (this.state === 'done' && at < data.length && this.head) this.head.keepAlive = false;
    return { head, body: pieces, complete: this.state === 'done' };
  }

  /** The LF ending the line at `at`, or -1 with the unfinished line kept for the next push. */
  private lineEnd(data: Uint8Array, at: number, what: string): number {
    const lf = data.indexOf(LF, at);
    if (lf !== -1) return lf;
    if (data.length - at > maxChunkLineBytes) throw new HttpParseError(`${what} too long`);
    this.carry = data.subarray(at);
    return -1;
  }

  private startBody(head: ResponseHead): void {
    const encoding = head.headers['transfer-encoding'];
    if (head.status === 204 || head.status === 304) this.state = 'done';
    else if (encoding !== undefined) {
      // With a Content-Length too, the framing is ambiguous to whoever sits in between: read
      // it as chunked (RFC 9112 §6.3) but do not reuse the connection.
      if (head.headers['content-length'] !== undefined) head.keepAlive = false;
      if (!/(?:^|,)\s*chunked\s*$/i.test(encoding)) {
        // Only a final `chunked` frames the body; anything else runs until the close.
        this.state = 'until-close';
        head.keepAlive = false;
      } else this.state = 'chunk-size';
    } else if (head.headers['content-length'] !== undefined) {
      const value = head.headers['content-length'];
      if (!/^\d+$/.test(value)) throw new HttpParseError('bad Content-Length');
      this.remaining = Number(value);
      this.state = this.remaining === 0 ? 'done' : 'length';
    } else {
      this.state = 'until-close';
      head.keepAlive = false;
    }
  }
}

function concat(pieces: Uint8Array[]): Uint8Array {
  let length = 0;
  for (const piece of pieces) length += piece.length;
  const out = Buffer.allocUnsafe(length);
  let at = 0;
  for (const piece of pieces) {
    out.set(piece, at);
    at += piece.length;
  }
  return out;
}

/** Index of the CRLF CRLF that ends a head, or -1. */
function indexOfBlankLine(data: Uint8Array, from: number): number {
  for (let i = data.indexOf(LF, from); i !== -1; i = data.indexOf(LF, i + 1)) {
    if (i >= 3 && data[i - 1] === CR && data[i - 2] === LF && data[i - 3] === CR) return i - 3;
  }
  return -1;
}

function parseHead(bytes: Uint8Array): ResponseHead {
  const text = latin1(bytes);
  const lines = text.split('\r\n');
  const status = /^HTTP\/1\.([01]) (\d{3})(?: .*)?$/.exec(lines[0] ?? '');
  if (!status) throw new HttpParseError(`not an HTTP/1.x status line: ${JSON.stringify((lines[0] ?? '').slice(0, 80))}`);
  const headers: Record<string, string> = {};
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(':');
    if (colon <= 0 || /[\s]/.test(line.slice(0, colon))) throw new HttpParseError(`bad header line: ${JSON.stringify(line.slice(0, 80))}`);
    const name = line.slice(0, colon).toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  const connection = (headers.connection ?? '').toLowerCase();
  const http10 = status[1] === '0';
  const keepAlive = http10 ? /\bkeep-alive\b/.test(connection) : !/\bclose\b/.test(connection);
  return { status: Number(status[2]), headers, keepAlive };
}

/** The chunk size on the line [from, lf): hex digits, then optional extensions (ignored). */
function chunkSize(data: Uint8Array, from: number, lf: number): number {
  // Read from the bytes: a string and a regular expression per chunk were ~half of this parser's
  // time at B3's 100 × 5k (a chunk per stream per millisecond).
  let size = 0;
  let digits = 0;
  let at = from;
  for (; at < lf; at++) {
    const byte = data[at]!;
    const digit = byte >= 48 && byte <= 57 ? byte - 48 : byte >= 97 && byte <= 102 ? byte - 87 : byte >= 65 && byte <= 70 ? byte - 55 : -1;
    if (digit === -1) break;
    size = size * 16 + digit;
    digits++;
  }
  // After the digits: spaces or tabs, then a `;` extension or the line end (CR LF or LF).
  while (at < lf && (data[at] === 32 || data[at] === 9)) at++;
  const rest = data[at];
  if (digits === 0 || digits > 12 || !(at === lf || rest === 59 || (rest === CR && at === lf - 1))) {
    throw new HttpParseError(`bad chunk size: ${JSON.stringify(latin1(data.subarray(from, Math.min(lf, from + 40))))}`);
  }
  return size;
}

function latin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}
