/**
 * A turn reading a real provider over TLS, on real timers: the text a held read lets in goes out
 * with the flush that let it in, though TLS hands one socket read over as a chunk per record.
 */
import { readFileSync } from 'node:fs';
import type net from 'node:net';
import tls from 'node:tls';
import { describe, expect, it } from 'vitest';
import type { DiffOp } from '@flint/stream-diff';
import { ChatCompletionsProvider } from '../../models/ChatCompletionsProvider';
import type { ModelProvider, ModelRequest } from '../../models/ModelProvider';
import type { Clock } from '../Clock';
import type { EditApplier } from './EditApplier';
import { Turn } from './Turn';

const key = readFileSync(new URL('../../models/testdata/localhost.key.pem', import.meta.url));
const cert = readFileSync(new URL('../../models/testdata/localhost.cert.pem', import.meta.url));

const event = (content: string) => `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"finish_reason":null}]}\n\n`;
const chunk = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
const head = 'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n';

describe('Turn over a TLS provider', () => {
  it('applies everything a held read let in with the flush that let it in, one record or many', async () => {
    let respond: (socket: tls.TLSSocket) => void = () => undefined;
    const server = tls.createServer({ key, cert }, (socket) => {
      socket.on('error', () => undefined);
      socket.once('data', () => respond(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    let socket: tls.TLSSocket | null = null;
    const write = (text: string) => new Promise<void>((resolve) => socket!.write(text, () => resolve()));
    let allWritten = (): void => undefined;
    const written = new Promise<void>((resolve) => (allWritten = resolve));
    // Time stands still, so every text after the first is due at the next flush, however slowly
    // this machine reads it; that flush's timer fires once the server has handed its last three
    // records to the kernel (on loopback, to the client's socket): no margin to guess.
    const startedAt = Date.now();
    const clock: Clock = {
      now: () => startedAt,
      setTimeout: (fn) => {
        const timer = { cancelled: false };
        void written.then(() => setImmediate(() => timer.cancelled || fn()));
        return timer;
      },
      clearTimeout: (handle) => void ((handle as { cancelled: boolean }).cancelled = true),
      afterIo: (fn) => void setImmediate(fn),
    };
    respond = (s) => {
      socket = s;
      // The first text: the turn flushes it at once (then the applier asks for 'b').
      void write(head + chunk(event('a')));
    };

    const real = new ChatCompletionsProvider({ baseUrl: `https://localhost:${port}/v1`, ca: cert, includeUsage: false });
    let holds = 0;
    // The real provider, told of each hold it takes: the server then writes three more tokens,
    // three TLS records, which reach the client's kernel while its socket is unread.
    const provider: ModelProvider = {
      kind: 'openai-chat',
      close: () => real.close(),
      stream: (request: ModelRequest, signal: AbortSignal) =>
        real.stream(
          {
            ...request,
            pacer: {
              holdUntilFlush: (resume) => {
                const held = request.pacer!.holdUntilFlush(resume);
                if (held && holds++ === 0) {
                  void write(chunk(event('c')))
                    .then(() => write(chunk(event('d'))))
                    .then(() => write(chunk(event('e')) + chunk('data: [DONE]\n\n') + '0\r\n\r\n'))
                    .then(allWritten);
                }
                return held;
              },
            },
          },
          signal,
        ),
    };

    const applied: string[] = [];
    const applier = {
      apply: (ops: DiffOp[]) => {
        const text = ops.map((op) => (op.type === 'insert' ? op.text : '')).join('');
        if (!text) return;
        applied.push(text);
        // 'a' is applied: now 'b', the read a hold follows.
        if (applied.length === 1) void write(chunk(event('b')));
      },
      finish: () => undefined,
    } as unknown as EditApplier;
    const ended = new Promise<void>((resolve) => {
      const turn = new Turn({
        info: { turnId: 't1', fileId: 'f', route: 'fast', model: 'm', instruction: 'write', by: 'test', agentClient: 1, startedAt: Date.now(), note: null },
        route: 'fast',
        provider,
        request: { model: 'm', messages: [{ role: 'user', content: 'write' }], maxOutputTokens: 100 },
        original: '',
        applier,
        clock,
        flushIntervalMs: 8,
        onChange: () => undefined,
        onText: () => undefined,
        onUsage: () => true,
        onEnd: () => resolve(),
      });
      void turn.run();
    });
    await ended;
    expect(holds).toBeGreaterThan(0);
    expect(applied.join('')).toBe('abcde');
    // 'a' at once; 'b' and everything the hold kept, together at the next flush.
    expect(applied[0]).toBe('a');
    expect(applied[1]).toBe('bcde');
    await real.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});
