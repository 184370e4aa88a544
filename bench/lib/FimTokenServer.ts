/**
 * A loopback OpenAI-compatible `/v1/completions` (FIM) endpoint with a fixed first-token delay:
 * the request body is read, then the first text chunk leaves `firstTokenMs` later and the rest
 * `gapMs` apart (all at once when 0), then the finish, usage and `[DONE]` events. The wire events
 * are the test-kit's own (`completionWire`, as FakeFimServer sends them); the test-kit fake has
 * no first-token delay (its `delayMs` only spaces deltas after the first), which B8 needs.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { completionWire } from '@flint/test-kit';

export interface FimScript {
  chunks: string[];
  firstTokenMs: number;
  gapMs: number;
}

export class FimTokenServer {
  private script: FimScript = { chunks: ['x'], firstTokenMs: 0, gapMs: 0 };
  requests = 0;

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<FimTokenServer> {
    const server = http.createServer();
    server.keepAliveTimeout = 60_000;
    const fake = new FimTokenServer(server);
    server.on('request', (req, res) => void fake.onRequest(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  configure(script: FimScript): void {
    this.script = script;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method !== 'POST' || !req.url?.startsWith('/v1/completions')) return void res.writeHead(404).end();
    this.requests++;
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { model?: string; stream_options?: { include_usage?: boolean } };
    const script = this.script;
    const events = completionWire({ text: script.chunks.join(''), chunks: script.chunks }, String(body.model ?? 'fake-model'), body.stream_options?.include_usage === true);
    const frame = (payload: unknown) => `data: ${typeof payload === 'string' ? payload : JSON.stringify(payload)}\n\n`;
    let closed = false;
    res.once('close', () => (closed = true));
    const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    await wait(script.firstTokenMs);
    if (closed) return;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const texts = events.filter((e) => e.isText);
    const tail = events.filter((e) => !e.isText).map((e) => frame(e.payload)).join('');
    if (script.gapMs <= 0) return void res.end(texts.map((e) => frame(e.payload)).join('') + tail);
    for (let i = 0; i < texts.length; i++) {
      if (closed) return;
      if (i > 0) await wait(script.gapMs);
      res.write(frame(texts[i]!.payload));
    }
    if (!closed) res.end(tail);
  }
}
