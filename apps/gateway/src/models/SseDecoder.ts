/**
 * Incremental Server-Sent Events decoding (WHATWG HTML §9.2.6) over raw byte chunks as they
 * arrive from the socket: an event, a line, a CRLF pair or a multi-byte UTF-8 character may be
 * split across chunks anywhere.
 */
import { isAscii } from 'node:buffer';

export interface SseEvent {
  /** The `event:` field; '' when the server sent none (the spec's default "message"). */
  event: string;
  data: string;
}

const LF = 10;

/** Where `SseDecoder.decode` delivers a chunk's events, in stream order. */
export interface SseSink {
  event(event: SseEvent): void;
  /**
   * A fast lane for a stream whose events nearly all look alike (a model's text deltas): asked
   * at the start of each event, it may read one or more whole events from `start` of `text`
   * itself and return the index just after the last one's blank line; -1 leaves the event to
   * the decoder (as does an event split across chunks, which it never sees whole). It must
   * take only events the decoder would read the same way, which no CR can be part of.
   */
  wholeEvent?(text: string, start: number): number;
}

export class SseDecoder {
  // `stream: true` keeps a partial UTF-8 sequence for the next chunk instead of emitting U+FFFD.
  // `ignoreBOM`: all-ASCII chunks skip this decoder, so its first input may be mid-stream, where
  // a U+FEFF is text; the stream's own leading BOM is dropped in `decode`.
  private readonly utf8 = new TextDecoder('utf-8', { ignoreBOM: true });
  /** Nothing decoded yet: a U+FEFF here is the stream's byte order mark (WHATWG: ignored). */
  private atStart = true;
  /** The last chunk through `utf8` ended in a non-ASCII byte: a sequence may still be open. */
  private utf8Open = false;
  /** The unterminated tail of the last chunk. */
  private partialLine = '';
  /** A chunk ended in CR: if the next starts with LF, that LF belongs to the same line break. */
  private skipLeadingLf = false;
  private eventType = '';
  private data = '';
  private hasData = false;

  /** Decodes one chunk; returns the events it completed (usually zero or one per token). */
  push(chunk: Uint8Array): SseEvent[] {
    const events: SseEvent[] = [];
    this.decode(chunk, { event: (event) => events.push(event) });
    return events;
  }

  /** Decodes one chunk, handing the events it completed to `sink` as it finds them. */
  decode(chunk: Uint8Array, sink: SseSink): void {
    let text = this.text(chunk);
    if (this.atStart && text.length > 0) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      this.atStart = false;
    }
    if (this.skipLeadingLf && text.length > 0) {
      if (text.charCodeAt(0) === LF) text = text.slice(1);
      this.skipLeadingLf = false;
    }
    if (this.partialLine.length > 0) {
      // The line the last chunk left unfinished is finished on its own. Prefixed to the whole
      // chunk it made the chunk a cons string, copied flat at its first search: a 64 KB copy on
      // nearly every read of a fast stream, whose reads end mid-event.
      const lf = text.indexOf('\n');
      const cr = (lf === -1 ? text : text.slice(0, lf)).indexOf('\r');
      const end = cr === -1 ? lf : cr;
      if (end === -1) {
        this.partialLine += text;
        return;
      }
      const line = this.partialLine + text.slice(0, end + 1);
      this.partialLine = '';
      this.scan(line, sink);
      text = text.slice(end + 1);
      if (this.skipLeadingLf && text.length > 0) {
        if (text.charCodeAt(0) === LF) text = text.slice(1);
        this.skipLeadingLf = false;
      }
    }
    this.scan(text, sink);
  }

  /**
   * Model streams are nearly all ASCII (JSON around code): an all-ASCII chunk, with no UTF-8
   * sequence left open by the one before, is its own string — ~4× cheaper than decoding it
   * (64 KB reads: ~50 vs ~200 ns per event). Anything else goes through the UTF-8 decoder.
   */
  private text(chunk: Uint8Array): string {
    if (!this.utf8Open && isAscii(chunk)) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('latin1');
    const text = this.utf8.decode(chunk, { stream: true });
    this.utf8Open = chunk.length > 0 && chunk[chunk.length - 1]! >= 0x80;
    return text;
  }

  /** The stream ended: per the spec an event without its blank line is dropped. */
  end(): void {
    this.utf8.decode();
    this.utf8Open = false;
    this.partialLine = '';
    this.data = '';
    this.hasData = false;
    this.eventType = '';
  }

  /** A line ends at whichever of CR and LF comes first; CRLF is one line end. */
  private scan(text: string, sink: SseSink): void {
    const length = text.length;
    const wholeEvent = sink.wholeEvent;
    // The next CR at or after `start` (-1: none in the rest), searched for again only once
    // `start` has passed it: servers end lines with LF nearly always, and then the text is
    // searched for a CR once, not once per line (which is quadratic: on 64 KB reads that was
    // most of the gateway's CPU at 200k tokens/s). Not at all while the fast lane reads
    // everything: it never takes a CR.
    let cr = -2;
    // The same for the next LF: a stream that ends lines with CR only has none.
    let lf = -2;
    let start = 0;
    while (start < length) {
      if (wholeEvent !== undefined && !this.hasData && this.eventType === '') {
        // Between events (an `id:` or comment line before does not count: neither is kept).
        const after = wholeEvent.call(sink, text, start);
        if (after !== -1) {
          start = after;
          continue;
        }
      }
      if (cr !== -1 && cr < start) cr = text.indexOf('\r', start);
      if (lf !== -1 && lf < start) lf = text.indexOf('\n', start);
      const end = cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf);
      if (end === -1) break;
      this.line(text, start, end, sink);
      start = end + 1;
      if (end === cr) {
        if (start === length) this.skipLeadingLf = true;
        else if (text.charCodeAt(start) === LF) start++;
      }
    }
    if (start < length) this.partialLine = text.slice(start);
  }

  private line(text: string, start: number, end: number, sink: SseSink): void {
    if (start === end) {
      if (this.hasData) sink.event({ event: this.eventType, data: this.data });
      this.eventType = '';
      this.data = '';
      this.hasData = false;
      return;
    }
    const colon = text.indexOf(':', start);
    if (colon === start) return; // a comment, e.g. a keep-alive ": ping"
    const fieldEnd = colon === -1 || colon > end ? end : colon;
    let valueStart = fieldEnd === end ? end : fieldEnd + 1;
    if (valueStart < end && text.charCodeAt(valueStart) === 32) valueStart++;
    const fieldLength = fieldEnd - start;
    if (fieldLength === 4 && text.startsWith('data', start)) {
      const value = text.slice(valueStart, end);
      this.data = this.hasData ? `${this.data}\n${value}` : value;
      this.hasData = true;
    } else if (fieldLength === 5 && text.startsWith('event', start)) {
      this.eventType = text.slice(valueStart, end);
    }
    // `id` and `retry` only matter to EventSource reconnection, which these streams never use.
  }
}
