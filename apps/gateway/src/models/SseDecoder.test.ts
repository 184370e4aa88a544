import { describe, expect, it } from 'vitest';
import { SseDecoder, type SseEvent } from './SseDecoder';

const encoder = new TextEncoder();

function decodeInPieces(bytes: Uint8Array, cuts: number[]): SseEvent[] {
  const decoder = new SseDecoder();
  const events: SseEvent[] = [];
  let start = 0;
  for (const cut of [...cuts, bytes.length]) {
    events.push(...decoder.push(bytes.subarray(start, cut)));
    start = cut;
  }
  decoder.end();
  return events;
}

describe('SseDecoder', () => {
  const wire =
    ': ping\r\n' +
    'event: response.output_text.delta\r\n' +
    'data: {"delta":"héllo 🚀"}\r\n\r\n' +
    'data: line one\n' +
    'data:line two\n\n' +
    'data: cr only\r\r' +
    ': keep-alive\n\n' +
    'data: [DONE]\n\n';
  const expected: SseEvent[] = [
    { event: 'response.output_text.delta', data: '{"delta":"héllo 🚀"}' },
    { event: '', data: 'line one\nline two' },
    { event: '', data: 'cr only' },
    { event: '', data: '[DONE]' },
  ];

  it('decodes comments, multi-line data and LF, CRLF and CR line endings', () => {
    expect(decodeInPieces(encoder.encode(wire), [])).toEqual(expected);
  });

  it('yields the same events for every single split point, inside UTF-8 characters and CRLF pairs included', () => {
    const bytes = encoder.encode(wire);
    for (let cut = 1; cut < bytes.length; cut++) {
      expect(decodeInPieces(bytes, [cut]), `split at byte ${cut}`).toEqual(expected);
    }
  });

  it('yields the same events when fed one byte at a time', () => {
    const bytes = encoder.encode(wire);
    const cuts = Array.from({ length: bytes.length - 1 }, (_, i) => i + 1);
    expect(decodeInPieces(bytes, cuts)).toEqual(expected);
  });

  it('drops an event whose blank line never arrived', () => {
    expect(decodeInPieces(encoder.encode('data: complete\n\ndata: cut off'), [])).toEqual([{ event: '', data: 'complete' }]);
  });

  it('drops the byte order mark that starts a stream, and keeps a U+FEFF that is text, however the reads fall', () => {
    const bytes = encoder.encode('\ufeffdata: a\n\ndata: b\ufeffc\n\n');
    const expectedEvents = [
      { event: '', data: 'a' },
      { event: '', data: 'b\ufeffc' },
    ];
    expect(decodeInPieces(bytes, [])).toEqual(expectedEvents);
    // Split before the second U+FEFF: the reads before it are all ASCII and skip the UTF-8 decoder.
    const at = bytes.lastIndexOf(0xef);
    expect(decodeInPieces(bytes, [3, at])).toEqual(expectedEvents);
    const noMark = bytes.subarray(3);
    expect(decodeInPieces(noMark, [noMark.lastIndexOf(0xef)])).toEqual(expectedEvents);
  });

  it('ignores blank lines without data and fields it does not use', () => {
    expect(decodeInPieces(encoder.encode('\n\nid: 7\nretry: 10\n\nevent: x\n\ndata\n\n'), [])).toEqual([{ event: '', data: '' }]);
  });
});
