/**
 * B9 — reading a provider's stream, in process: the gateway's own read path (HttpResponseParser
 * → SseDecoder → the chat-chunk fast lane → TextRun) against what a client without it does (the
 * OpenAI SDKs, B1's direct arm): cut the body into events at each blank line and `JSON.parse`
 * every `data:`. The same Chat Completions body (chunked HTTP, 64 KB reads) for both, runs
 * interleaved, in one process: no network, no other server, so a few percent show. Two streams:
 * the test-kit wire B2/B3's paced provider sends, and the same padded as OpenAI pads every event
 * (`"obfuscation":"<random>"`).
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chatCompletionWire } from '@flint/test-kit';
import * as chatChunk from '../../apps/gateway/src/models/chatChunk';
import * as httpResponseParser from '../../apps/gateway/src/models/HttpResponseParser';
import * as sseDecoder from '../../apps/gateway/src/models/SseDecoder';
import * as textRun from '../../apps/gateway/src/models/TextRun';
import type { Benchmark, BenchReport } from '../lib/Benchmark';
import { tokenText } from '../lib/PacedTokenServer';
import { median } from '../lib/percentile';
import { shuffled } from '../lib/shuffled';

const readBytes = 65_536;
/** Events per HTTP chunk: what the paced provider writes per millisecond at 20k tokens/s. */
const eventsPerChunk = 20;
const pads = ['ZGF', 'lRK2aBv', 'kJ', '0wmdEAC', 'Bp', 'x9QZ'];

/** The whole HTTP response: head, then the SSE events in chunks. */
function responseBytes(events: number, padded: boolean): Buffer {
  const wire = chatCompletionWire({ text: '', chunks: tokenText(events) }, 'bench-model', true, 'chatcmpl-bench9');
  const sse = wire.map((event, i) => {
    const payload = padded && event.isText ? { ...(event.payload as object), obfuscation: pads[i % pads.length] } : event.payload;
    return `data: ${typeof payload === 'string' ? payload : JSON.stringify(payload)}\n\n`;
  });
  let http = 'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n';
  for (let i = 0; i < sse.length; i += eventsPerChunk) {
    const chunk = sse.slice(i, i + eventsPerChunk).join('');
    http += `${Buffer.byteLength(chunk).toString(16)}\r\n${chunk}\r\n`;
  }
  return Buffer.from(`${http}0\r\n\r\n`, 'utf8');
}

/** The gateway's read path, from this checkout or another one's modules. */
interface ReadPath {
  ChatChunkReader: typeof chatChunk.ChatChunkReader;
  HttpResponseParser: typeof httpResponseParser.HttpResponseParser;
  SseDecoder: typeof sseDecoder.SseDecoder;
  TextRun: typeof textRun.TextRun;
}

const ours: ReadPath = { ...chatChunk, ...httpResponseParser, ...sseDecoder, ...textRun };

/** BENCH_VARIANT_ROOT: the same modules of another checkout, for an A/B in one run. */
async function variantPath(root: string): Promise<ReadPath> {
  const load = (file: string) => import(pathToFileURL(join(root, 'apps/gateway/src/models', file)).href);
  const modules = await Promise.all(['chatChunk.ts', 'HttpResponseParser.ts', 'SseDecoder.ts', 'TextRun.ts'].map(load));
  return Object.assign({}, ...modules) as ReadPath;
}

/** The gateway's path; returns the text's length (checked against the control's). */
function flint(bytes: Buffer, { ChatChunkReader, HttpResponseParser, SseDecoder, TextRun }: ReadPath): number {
  const parser = new HttpResponseParser();
  const decoder = new SseDecoder();
  const reader = new ChatChunkReader();
  const run = new TextRun();
  const sink = {
    event: ({ data }: { data: string }) => {
      const chunk = reader.chunk(data);
      if (chunk?.text) run.add(chunk.text);
    },
    wholeEvent: (text: string, start: number) => reader.wholeEvent(text, start, run),
  };
  let length = 0;
  for (let at = 0; at < bytes.length; at += readBytes) {
    // (Before round 11 the parser joined a read's chunks into one buffer.)
    const body: Uint8Array | Uint8Array[] | null = parser.push(bytes.subarray(at, at + readBytes)).body;
    for (const piece of Array.isArray(body) ? body : body ? [body] : []) decoder.decode(piece, sink);
    const event = run.take();
    if (event?.type === 'text') length += event.text.length;
  }
  return length;
}

/** The control: the same chunked-body parser, then the events cut at blank lines and each `JSON.parse`d. */
function parseEach(bytes: Buffer): number {
  const parser = new httpResponseParser.HttpResponseParser();
  const utf8 = new TextDecoder();
  let buffer = '';
  let length = 0;
  for (let at = 0; at < bytes.length; at += readBytes) {
    for (const piece of parser.push(bytes.subarray(at, at + readBytes)).body) buffer += utf8.decode(piece, { stream: true });
    let start = 0;
    for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n', start)) {
      const data = buffer.slice(start + 6, end);
      start = end + 2;
      if (data === '[DONE]') continue;
      const content = (JSON.parse(data) as { choices?: Array<{ delta?: { content?: string } }> }).choices?.[0]?.delta?.content;
      if (content) length += content.length;
    }
    buffer = buffer.slice(start);
  }
  return length;
}

export const b9StreamReading: Benchmark = {
  id: 'B9',
  name: 'b9-stream-reading',
  title: "reading a provider's stream in process: the gateway's read path vs JSON.parse per event",
  async run(ctx): Promise<BenchReport> {
    const events = ctx.smoke ? 2_000 : 20_000;
    const reps = ctx.smoke ? 3 : 25;
    const streams = [
      { name: 'test-kit wire (B2/B3)', bytes: responseBytes(events, false) },
      { name: 'OpenAI-padded (obfuscation)', bytes: responseBytes(events, true) },
    ];
    const variantRoot = process.env.BENCH_VARIANT_ROOT;
    const variant = variantRoot ? await variantPath(variantRoot) : null;
    const arms = [
      { name: 'Flint: parser → SseDecoder → fast lane', read: (bytes: Buffer) => flint(bytes, ours) },
      { name: 'control: JSON.parse per event', read: parseEach },
      ...(variant ? [{ name: 'variant: the same path of BENCH_VARIANT_ROOT', read: (bytes: Buffer) => flint(bytes, variant) }] : []),
    ];
    ctx.log(`${events} events per stream in ${readBytes / 1024} KB reads, ${reps} repetitions per arm, interleaved (+3 warm-up)`);
    const samples = new Map(streams.flatMap((stream) => arms.map((arm) => [`${stream.name}|${arm.name}`, [] as number[]])));
    for (let rep = -3; rep < reps; rep++) {
      for (const stream of streams) {
        const lengths = new Set<number>();
        for (const arm of shuffled(arms)) {
          const t0 = process.hrtime.bigint();
          lengths.add(arm.read(stream.bytes));
          const ns = Number(process.hrtime.bigint() - t0) / events;
          if (rep >= 0) samples.get(`${stream.name}|${arm.name}`)!.push(ns);
        }
        if (lengths.size !== 1) throw new Error(`B9: the readings of ${stream.name} disagree (${[...lengths].join(' vs ')} characters)`);
      }
    }
    const rows = streams.flatMap((stream) => {
      const control = median(samples.get(`${stream.name}|${arms[1]!.name}`)!);
      return arms.map((arm) => {
        const values = samples.get(`${stream.name}|${arm.name}`)!;
        return { stream: stream.name, arm: arm.name, nsPerEvent: median(values), min: Math.min(...values), max: Math.max(...values), vsControl: median(values) / control };
      });
    });
    return {
      tables: [
        {
          title: 'B9 ns per event read (median of repetitions), one process, no network',
          columns: ['stream', 'reader', 'ns/event', 'min', 'max', 'vs control'],
          rows: rows.map((r) => [r.stream, r.arm, r.nsPerEvent, r.min, r.max, r.vsControl]),
          notes: [
            `the same Chat Completions response for both: chunked HTTP (${eventsPerChunk} events per chunk), read ${readBytes / 1024} KB at a time; both must find the same text.`,
            'Flint = what the gateway runs per provider read (decision 0013); control = what a client without a fast lane does per event.',
            'OpenAI-padded = every text event ends with "obfuscation":"<random>", as OpenAI sends by default.',
          ],
        },
      ],
      targets: [],
      data: { events, reps, readBytes, eventsPerChunk, rows },
    };
  },
};
