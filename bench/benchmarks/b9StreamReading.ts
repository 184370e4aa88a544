/**
 * B9 — reading a provider's stream, in process: the gateway's read path (the SSE body's bytes →
 * TextDecoder → eventsource-parser → ChatChunkReader (text-only events without `JSON.parse`) →
 * TextRun, as `SseResponse.read` and
 * the Chat Completions adapter run it) against what the OpenAI SDKs do (B1's direct arm): cut the
 * body at each blank line and `JSON.parse` every `data:`. The same body for both, 64 KB reads,
 * runs interleaved, in one process: no network, no other server, so a few percent show. The HTTP
 * framing is undici's (llhttp) and not part of either arm; B2/B3 measure the whole path. Two
 * streams: the test-kit wire B2/B3's paced provider sends, and the same padded as OpenAI pads
 * every event (`"obfuscation":"<random>"`). With BENCH_VARIANT_ROOT at a checkout that still has
 * the hand-written reader (SseDecoder and the chat-chunk fast lane, before issue 22), that reader
 * on the same bytes as one more arm.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chatCompletionWire } from '@flint/test-kit';
import { ChatChunkReader, sseDecoder, TextRun } from '@flint/gateway/testing';
import type { Benchmark, BenchReport } from '../lib/Benchmark';
import { tokenText } from '../lib/PacedTokenServer';
import { median } from '../lib/percentile';
import { shuffled } from '../lib/shuffled';

const readBytes = 65_536;
const pads = ['ZGF', 'lRK2aBv', 'kJ', '0wmdEAC', 'Bp', 'x9QZ'];

/** The SSE body of a whole Chat Completions answer. */
function bodyBytes(events: number, padded: boolean): Buffer {
  const wire = chatCompletionWire({ text: '', chunks: tokenText(events) }, 'bench-model', true, 'chatcmpl-bench9');
  const sse = wire.map((event, i) => {
    const payload = padded && event.isText ? { ...(event.payload as object), obfuscation: pads[i % pads.length] } : event.payload;
    return `data: ${typeof payload === 'string' ? payload : JSON.stringify(payload)}\n\n`;
  });
  return Buffer.from(sse.join(''), 'utf8');
}

/** The gateway's path; returns the text's length (checked against the control's). */
function flint(bytes: Buffer): number {
  const run = new TextRun();
  const reader = new ChatChunkReader();
  const decode = sseDecoder(({ data }) => {
    const chunk = reader.chunk(data);
    if (chunk?.text) run.add(chunk.text);
  });
  let length = 0;
  for (let at = 0; at < bytes.length; at += readBytes) {
    decode(bytes.subarray(at, at + readBytes));
    const event = run.take();
    if (event?.type === 'text') length += event.text.length;
  }
  return length;
}

/** The hand-written reader of a checkout before issue 22: its SseDecoder with the chat-chunk fast lane. */
interface OldReadPath {
  ChatChunkReader: new () => { chunk(data: string): { text: string } | null; wholeEvent(text: string, start: number, into: TextRun): number };
  SseDecoder: new () => { decode(bytes: Uint8Array, sink: { event(e: { data: string }): void; wholeEvent(text: string, start: number): number }): void };
  TextRun: typeof TextRun;
}

async function oldReadPath(root: string): Promise<OldReadPath | null> {
  const dir = join(root, 'apps/gateway/src/models');
  if (!existsSync(join(dir, 'SseDecoder.ts'))) return null;
  const modules = await Promise.all(['chatChunk.ts', 'SseDecoder.ts', 'TextRun.ts'].map((file) => import(pathToFileURL(join(dir, file)).href)));
  return Object.assign({}, ...modules) as OldReadPath;
}

function oldReader(bytes: Buffer, { ChatChunkReader, SseDecoder, TextRun: Run }: OldReadPath): number {
  const decoder = new SseDecoder();
  const reader = new ChatChunkReader();
  const run = new Run();
  const sink = {
    event: ({ data }: { data: string }) => {
      const chunk = reader.chunk(data);
      if (chunk?.text) run.add(chunk.text);
    },
    wholeEvent: (text: string, start: number) => reader.wholeEvent(text, start, run),
  };
  let length = 0;
  for (let at = 0; at < bytes.length; at += readBytes) {
    decoder.decode(bytes.subarray(at, at + readBytes), sink);
    const event = run.take();
    if (event?.type === 'text') length += event.text.length;
  }
  return length;
}

/** The control: the events cut at blank lines and each `JSON.parse`d. */
function parseEach(bytes: Buffer): number {
  const utf8 = new TextDecoder();
  let buffer = '';
  let length = 0;
  for (let at = 0; at < bytes.length; at += readBytes) {
    buffer += utf8.decode(bytes.subarray(at, at + readBytes), { stream: true });
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
      { name: 'test-kit wire (B2/B3)', bytes: bodyBytes(events, false) },
      { name: 'OpenAI-padded (obfuscation)', bytes: bodyBytes(events, true) },
    ];
    const variantRoot = process.env.BENCH_VARIANT_ROOT;
    const variant = variantRoot ? await oldReadPath(variantRoot) : null;
    if (variantRoot && !variant) ctx.log(`B9: ${variantRoot} has no hand-written reader (SseDecoder.ts): no variant arm`);
    const arms = [
      { name: 'Flint: eventsource-parser → ChatChunkReader', read: flint },
      { name: 'control: JSON.parse per event', read: parseEach },
      ...(variant ? [{ name: 'variant: SseDecoder → fast lane of BENCH_VARIANT_ROOT', read: (bytes: Buffer) => oldReader(bytes, variant) }] : []),
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
            `the same Chat Completions SSE body for every arm, read ${readBytes / 1024} KB at a time; all must find the same text.`,
            'Flint = what the gateway runs per provider read (decision 0021); control = cut at blank lines, JSON.parse each event.',
            'OpenAI-padded = every text event ends with "obfuscation":"<random>", as OpenAI sends by default.',
          ],
        },
      ],
      targets: [],
      data: { events, reps, readBytes, rows },
    };
  },
};
