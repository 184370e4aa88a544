import { propertyConfig, seededRandom } from '@flint/test-kit';
import { describe, expect, it } from 'vitest';
import { HttpParseError, HttpResponseParser, type ResponseHead } from './HttpResponseParser';

const { seed, iterations } = propertyConfig(300);
const bytes = (text: string) => new TextEncoder().encode(text);

/** Feeds `wire` cut at `cuts`; returns the head, the body as text, and whether the response completed. */
function parse(wire: Uint8Array, cuts: number[] = []): { head: ResponseHead | null; body: string; complete: boolean } {
  const parser = new HttpResponseParser();
  let head: ResponseHead | null = null;
  const body: Uint8Array[] = [];
  let complete = false;
  let start = 0;
  for (const cut of [...cuts, wire.length]) {
    const parsed = parser.push(wire.subarray(start, cut));
    if (parsed.head) head = parsed.head;
    for (const piece of parsed.body) body.push(piece.slice());
    if (parsed.complete) complete = true;
    start = cut;
  }
  return { head, body: Buffer.concat(body).toString('utf8'), complete };
}

const chunked = (pieces: string[], trailer = '') =>
  `HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n${pieces
    .map((piece) => `${Buffer.byteLength(piece).toString(16)}\r\n${piece}\r\n`)
    .join('')}0\r\n${trailer}\r\n`;

describe('HttpResponseParser', () => {
  it('reads a chunked answer: its head, its body without the framing, its end', () => {
    const { head, body, complete } = parse(bytes(chunked(['data: a\n\n', 'data: é🚀\n\n'])));
    expect(head).toEqual({ status: 200, headers: { 'content-type': 'text/event-stream', 'transfer-encoding': 'chunked' }, keepAlive: true });
    expect(body).toBe('data: a\n\ndata: é🚀\n\n');
    expect(complete).toBe(true);
  });

  it('gives the chunks one network read held as a piece each, without copying them together', () => {
    const parser = new HttpResponseParser();
    parser.push(bytes('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n'));
    const parsed = parser.push(bytes('3\r\nabc\r\n2\r\nde\r\n1;ext=1\r\nf\r\nA \r\n0123456789\r\n'));
    expect(parsed.body.map((piece) => Buffer.from(piece).toString())).toEqual(['abc', 'de', 'f', '0123456789']);
    expect(parsed.complete).toBe(false);
  });

  it('reads Content-Length and close-delimited bodies, skips 1xx answers, and honours Connection', () => {
    const length = parse(bytes('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 429 Too Many Requests\r\nRetry-After: 2\r\nContent-Length: 5\r\n\r\nslow!'));
    expect(length).toMatchObject({ head: { status: 429, headers: { 'retry-after': '2', 'content-length': '5' }, keepAlive: true }, body: 'slow!', complete: true });
    const untilClose = parse(bytes('HTTP/1.1 200 OK\r\nConnection: close\r\n\r\ndata: x\n\n'));
    expect(untilClose).toMatchObject({ head: { status: 200, keepAlive: false }, body: 'data: x\n\n', complete: false });
    expect(parse(bytes('HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n')).head?.keepAlive).toBe(false);
    expect(parse(bytes('HTTP/1.1 204 No Content\r\n\r\n')).complete).toBe(true);
    // Repeated fields are joined; names are lower-case; values trimmed.
    expect(parse(bytes('HTTP/1.1 200 OK\r\nX-A:  1 \r\nx-a: 2\r\nContent-Length: 0\r\n\r\n')).head?.headers['x-a']).toBe('1, 2');
  });

  it('refuses what is not an HTTP/1.1 answer', () => {
    expect(() => parse(bytes('SSH-2.0-OpenSSH\r\n\r\n'))).toThrow(HttpParseError);
    expect(() => parse(bytes('HTTP/1.1 200 OK\r\nbad header\r\n\r\n'))).toThrow(HttpParseError);
    expect(() => parse(bytes('HTTP/1.1 200 OK\r\nContent-Length: 1e3\r\n\r\n'))).toThrow(HttpParseError);
    expect(() => parse(bytes('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'))).toThrow(HttpParseError);
    expect(() => parse(bytes('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nabX'))).toThrow(HttpParseError);
    expect(() => parse(bytes(`HTTP/1.1 200 OK\r\nX: ${'y'.repeat(70_000)}`))).toThrow(HttpParseError);
  });

  it('does not keep a connection that sent bytes after its answer, or framed it both ways', () => {
    expect(parse(bytes('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA')).head).toMatchObject({ keepAlive: false });
    const both = parse(bytes('HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n'));
    expect(both).toMatchObject({ head: { keepAlive: false }, body: 'ok', complete: true });
  });

  it(`gives the same head, body and end for any split of the bytes (SEED=${seed} ITERATIONS=${iterations})`, () => {
    for (let i = 0; i < iterations; i++) {
      const random = seededRandom(seed + i);
      const alphabet = [...'a\r\n:é🚀0;'];
      const pieces = Array.from({ length: Math.floor(random() * 8) }, () =>
        Array.from({ length: Math.floor(random() * 40) }, () => alphabet[Math.floor(random() * alphabet.length)]).join(''),
      ).filter((piece) => piece.length > 0);
      const text = pieces.join('');
      const framing = Math.floor(random() * 3);
      const wire = bytes(
        framing === 0
          ? chunked(pieces, random() < 0.3 ? 'X-Trailer: 1\r\n' : '')
          : framing === 1
            ? `HTTP/1.1 200 OK\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`
            : `HTTP/1.1 200 OK\r\n\r\n${text}`,
      );
      const whole = parse(wire);
      expect(whole.body, `SEED=${seed + i}`).toBe(text);
      expect(whole.complete, `SEED=${seed + i}`).toBe(framing !== 2);
      const cuts = Array.from({ length: Math.floor(random() * 10) }, () => Math.floor(random() * wire.length)).sort((a, b) => a - b);
      const split = parse(wire, cuts);
      expect(split, `SEED=${seed + i} cuts ${cuts.join(',')}`).toEqual(whole);
    }
  });
});
