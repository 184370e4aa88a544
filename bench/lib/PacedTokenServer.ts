/**
 * A loopback OpenAI-compatible Chat Completions server (SSE) that streams at an exact rate.
 *
 * Why not FakeOpenAIServer's `tokensPerSecond`: it waits one timer per delta, and Node timers
 * cannot fire more often than once a millisecond, so every rate above ~1k tokens/s silently
 * becomes ~1k (measured: see bench/README.md). Here a token's send time comes from a schedule
 * (token i at t0 + i / rate) and one 1 ms ticker writes every token that is due, as a real
 * server's TCP stream would coalesce them. The wire events are the test-kit's own
 * (`chatCompletionWire`), serialised once per configuration, so the token source costs little
 * CPU and is never the bottleneck. One delta is one token. Each response has its own `id`, as a
 * real server's completions do (every event repeats it): the test-kit's wire uses one id for
 * all, which hid a cache of the gateway's that only worked while concurrent streams shared one.
 */
import { randomUUID } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { chatCompletionWire } from '@flint/test-kit';
import { markerComment, markerPattern } from '../browser/src/markers';
import { benchTls } from './benchTls';
import { answerFrames, type PacedAnswer } from './pacedAnswer';

export interface PacedScript {
  /** Text deltas per response. */
  tokens: number;
  /** Null: as fast as the socket takes them (backpressure respected). */
  tokensPerSecond: number | null;
  /**
   * Stream `markedTokenText` instead of `tokenText`, and record when each line's marker was
   * written to the socket (`StreamRecord.markerSentAt`): token-to-screen lag for B5. Paced only.
   * `'token'`: `tokenMarkedText`, a marker in every token (B10's lag per token).
   */
  markers?: boolean | 'token';
  /**
   * Explicit answers instead of `tokens` of generated text (B11, the agent thread): `answer` to
   * a request, `followUp` to one that carries a tool's result (its last message is
   * `role: 'tool'`), as the gateway's tool loop sends after a function call. Paced only.
   */
  answers?: { answer: PacedAnswer; followUp?: PacedAnswer };
}

export interface StreamRecord {
  tokens: number;
  startedAt: number;
  endedAt: number | null;
  /** Marker mode: epoch ms (performance.timeOrigin + now) when marker i's last token was written; NaN if never. */
  markerSentAt?: number[];
  /** Epoch ms when the first and the last token were written. */
  firstTokenAt?: number;
  lastTokenAt?: number;
  /** Explicit answers: the follow-up's request carried this tool result (what the gateway told the model). */
  toolResult?: string;
}

interface ActiveStream {
  res: ServerResponse;
  frames: Wire;
  /** This response's `id`. */
  id: string;
  next: number;
  startedAt: number;
  rate: number;
  record: StreamRecord;
  /** Explicit answers: this response's token events, whole, its id in place (`frames.tokens` hold the wire's). */
  own: string[] | null;
}

/** The test-kit wire's one id, and what every chunk event starts with up to it. */
const wireId = 'chatcmpl-fake';
const beforeId = 'data: {"id":"';

interface Wire {
  head: string;
  /** Each token's event after its id (each starts `beforeId` + the response's id). */
  tokens: string[];
  tail: string;
  /** Marker mode: token index → the marker it completes, or -1. */
  markerAt: Int32Array | null;
  /**
   * 'latin1' when every event is ASCII (the same bytes as UTF-8): Node then copies the string
   * instead of encoding it, ~30% less of this process's CPU per token unthrottled, where it
   * shares the two cores with the server it feeds.
   */
  encoding: 'latin1' | 'utf8';
}

/** Code-like text: a delta is ~4 characters, like a BPE token of source code. */
const sourceText = `export function tally(items: readonly Item[], by: (item: Item) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) {
    const key = by(item);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

`;
const sourceTokens = Array.from(sourceText.matchAll(/[\s\S]{1,4}/g), (m) => m[0]);

export function tokenText(count: number): string[] {
  const out: string[] = new Array(count);
  for (let i = 0; i < count; i++) out[i] = sourceTokens[i % sourceTokens.length]!;
  return out;
}

/**
 * Code-like lines that each end with a numbered marker (`// @000042`), cut into ~4-character
 * tokens: a page can tell exactly when each line reached it, and the server when it sent it.
 */
export function markedTokenText(count: number): { tokens: string[]; markerAt: Int32Array; markers: number } {
  let text = '';
  for (let line = 0; text.length < count * 4; line++) {
    text += `  total += weigh(items[${line % 97}], ${line * 7}); ${markerComment(line)}\n`;
  }
  const tokens = Array.from(text.slice(0, count * 4).matchAll(/[\s\S]{1,4}/g), (m) => m[0]);
  const markerAt = new Int32Array(tokens.length).fill(-1);
  let markers = 0;
  for (const match of text.matchAll(markerPattern)) {
    const lastToken = Math.floor((match.index + match[0].length - 1) / 4);
    if (lastToken >= tokens.length) break;
    markerAt[lastToken] = Number(match[1]);
    markers++;
  }
  return { tokens, markerAt, markers };
}

/**
 * Every token its own marker, eight to a comment line (`// @000000 @000001 … @000007`): a page
 * can tell when each token reached it, and the server when it wrote it (marker i is token i).
 * Each line is unlike any line of ordinary code, so a rewrite made of them shares nothing with
 * the original: the stream-diff cannot align it before it has seen enough (B10).
 */
export function tokenMarkedText(count: number): { tokens: string[]; markerAt: Int32Array; markers: number } {
  const perLine = 8;
  const tokens: string[] = new Array(count);
  const markerAt = new Int32Array(count);
  for (let i = 0; i < count; i++) {
    const column = i % perLine;
    tokens[i] = `${column === 0 ? markerComment(i) : ` @${String(i).padStart(6, '0')}`}${column === perLine - 1 ? '\n' : ''}`;
    markerAt[i] = i;
  }
  return { tokens, markerAt, markers: count };
}

export class PacedTokenServer {
  private script: PacedScript = { tokens: 1000, tokensPerSecond: 1000 };
  private readonly wires = new Map<string, Wire>();
  private readonly active = new Set<ActiveStream>();
  private ticker: NodeJS.Timeout | null = null;
  readonly streams: StreamRecord[] = [];

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<PacedTokenServer> {
    const tls = benchTls();
    const server = tls ? https.createServer(tls) : http.createServer();
    server.keepAliveTimeout = 60_000;
    const paced = new PacedTokenServer(server);
    server.on('request', (req, res) => void paced.onRequest(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return paced;
  }

  get baseUrl(): string {
    return `${this.server instanceof https.Server ? 'https' : 'http'}://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  configure(script: PacedScript): void {
    if (script.answers && script.tokensPerSecond === null) throw new Error('explicit answers are paced: give tokensPerSecond');
    this.script = script;
    this.streams.length = 0;
    for (const key of this.wires.keys()) if (key.startsWith('answer:')) this.wires.delete(key);
    if (script.answers) return;
    // Serialised now, not on the first request: for B3's 200,000-token stream that took over a
    // second of this process's CPU inside the first measured arm (and none in the next one).
    for (const includeUsage of [false, true]) this.wireFor(script.tokens, includeUsage, script.markers ?? false);
  }

  private wireFor(tokens: number, includeUsage: boolean, markers: boolean | 'token'): Wire {
    const key = `${tokens}:${includeUsage}:${markers}`;
    let wire = this.wires.get(key);
    if (wire) return wire;
    const marked = markers === 'token' ? tokenMarkedText(tokens) : markers ? markedTokenText(tokens) : null;
    const events = chatCompletionWire({ text: '', chunks: marked?.tokens ?? tokenText(tokens) }, 'bench-model', includeUsage);
    const sse = events.map((e) => `data: ${typeof e.payload === 'string' ? e.payload : JSON.stringify(e.payload)}\n\n`);
    const firstText = events.findIndex((e) => e.isText);
    const lastText = events.length - 1 - [...events].reverse().findIndex((e) => e.isText);
    const tokenEvents = sse.slice(firstText, lastText + 1);
    if (!tokenEvents.every((event) => event.startsWith(beforeId + wireId))) throw new Error('the test-kit wire changed its chunk envelope');
    wire = {
      head: sse.slice(0, firstText).join(''),
      tokens: tokenEvents.map((event) => event.slice(beforeId.length + wireId.length)),
      tail: sse.slice(lastText + 1).join(''),
      markerAt: marked?.markerAt ?? null,
      encoding: sse.every((event) => /^[\x00-\x7f]*$/.test(event)) ? 'latin1' : 'utf8',
    };
    this.wires.set(key, wire);
    return wire;
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body = '';
    for await (const chunk of req) body += String(chunk);
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404).end();
      return;
    }
    let request: { stream_options?: { include_usage?: boolean }; messages?: Array<{ role?: string; content?: unknown }> };
    try {
      request = JSON.parse(body) as typeof request;
    } catch {
      res.writeHead(400).end();
      return;
    }
    const includeUsage = request.stream_options?.include_usage === true;
    const { tokensPerSecond, markers = false, answers } = this.script;
    const last = request.messages?.at(-1);
    const followUp = answers?.followUp && last?.role === 'tool' ? answers.followUp : null;
    const frames = answers ? this.answerWire(followUp ? 'followUp' : 'answer', followUp ?? answers.answer, includeUsage) : this.wireFor(this.script.tokens, includeUsage, markers);
    const tokens = frames.tokens.length;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const record: StreamRecord = { tokens, startedAt: performance.now(), endedAt: null };
    if (frames.markerAt) record.markerSentAt = new Array<number>(frames.markerAt.reduce((n, m) => (m >= 0 ? n + 1 : n), 0)).fill(Number.NaN);
    if (followUp) record.toolResult = typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content);
    this.streams.push(record);
    const id = `chatcmpl-${randomUUID()}`;
    res.write(frames.head.replaceAll(wireId, id), frames.encoding);
    if (tokensPerSecond === null) return this.unthrottled(res, frames, record, id);
    const own = answers ? frames.tokens.map((event) => event.replaceAll(wireId, id)) : null;
    this.active.add({ res, frames, id, next: 0, startedAt: record.startedAt, rate: tokensPerSecond, record, own });
    this.tick();
  }

  /** An explicit answer's wire (B11), serialised once per configuration. */
  private answerWire(which: 'answer' | 'followUp', answer: PacedAnswer, includeUsage: boolean): Wire {
    const key = `answer:${which}:${includeUsage}`;
    let wire = this.wires.get(key);
    if (wire) return wire;
    const frames = answerFrames(answer, 'bench-model', includeUsage, wireId);
    const all = [frames.head, ...frames.tokens, frames.tail];
    wire = { ...frames, encoding: all.every((event) => /^[\x00-\x7f]*$/.test(event)) ? 'latin1' : 'utf8' };
    this.wires.set(key, wire);
    return wire;
  }

  /** Token events [from, to) of a response, with its id. */
  private static events(frames: Wire, id: string, from: number, to: number): string {
    const lead = beforeId + id;
    let text = '';
    for (let i = from; i < to; i++) text += lead + frames.tokens[i]!;
    return text;
  }

  private async unthrottled(res: ServerResponse, frames: Wire, record: StreamRecord, id: string): Promise<void> {
    const batch = 256;
    let wake: (() => void) | null = null;
    const resume = () => {
      wake?.();
      wake = null;
    };
    res.on('drain', resume);
    res.once('close', resume);
    for (let i = 0; i < frames.tokens.length && !res.destroyed; i += batch) {
      if (!res.write(PacedTokenServer.events(frames, id, i, Math.min(i + batch, frames.tokens.length)), frames.encoding)) await new Promise<void>((resolve) => (wake = resolve));
    }
    res.off('drain', resume);
    record.endedAt = performance.now();
    res.end(frames.tail.replaceAll(wireId, id), frames.encoding);
  }

  private startTicker(): void {
    if (this.ticker === null && this.active.size > 0) this.ticker = setTimeout(() => this.tick(), 1);
  }

  /** Writes every token that is due on every active stream (one write per stream per tick). */
  private tick(): void {
    if (this.ticker !== null) clearTimeout(this.ticker);
    this.ticker = null;
    const now = performance.now();
    for (const stream of this.active) {
      const { res, frames } = stream;
      if (res.destroyed) {
        this.active.delete(stream);
        continue;
      }
      // A reader that does not keep up gets no more until it drains, as a real server's TCP would.
      if (res.writableNeedDrain) continue;
      const due = Math.min(frames.tokens.length, Math.floor(((now - stream.startedAt) * stream.rate) / 1000) + 1);
      if (due > stream.next) {
        res.write(stream.own ? stream.own.slice(stream.next, due).join('') : PacedTokenServer.events(frames, stream.id, stream.next, due), frames.encoding);
        const { record } = stream;
        const sentAt = record.markerSentAt;
        if ((sentAt && frames.markerAt) || stream.next === 0 || due === frames.tokens.length) {
          const epoch = performance.timeOrigin + performance.now();
          if (sentAt && frames.markerAt) for (let i = stream.next; i < due; i++) if (frames.markerAt[i]! >= 0) sentAt[frames.markerAt[i]!] = epoch;
          if (stream.next === 0) record.firstTokenAt = epoch;
          if (due === frames.tokens.length) record.lastTokenAt = epoch;
        }
        stream.next = due;
      }
      if (stream.next >= frames.tokens.length) {
        stream.record.endedAt = now;
        res.end(frames.tail.replaceAll(wireId, stream.id), frames.encoding);
        this.active.delete(stream);
      }
    }
    this.startTicker();
  }

  async close(): Promise<void> {
    if (this.ticker !== null) clearTimeout(this.ticker);
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
