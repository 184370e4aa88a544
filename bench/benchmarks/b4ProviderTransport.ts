/**
 * B4 — the Responses API over one persistent WebSocket vs per-request HTTP SSE, for a 20-turn
 * agent loop (200 tokens per turn) against the fake provider, interleaved turn by turn.
 * Overhead per turn = turn wall time (request → `done`) − the streaming span (first → last
 * text delta): what the transport adds around the tokens themselves (request upload, server
 * parse, first byte, completion). The provider adapters run here; the fake in its own process.
 * Floors, interleaved with the turns: a WebSocket ping → pong and an HTTP request → empty 404
 * between the same two processes — one round trip and nothing else, the least a turn can cost
 * over each transport on this machine.
 */
import http from 'node:http';
import WebSocket from 'ws';
import { ResponsesProvider, type ModelMessage } from '@flint/gateway';
import type { Benchmark, BenchReport } from '../lib/Benchmark';
import { ChildHost } from '../lib/ChildHost';
import { tokenText } from '../lib/PacedTokenServer';
import { summarize } from '../lib/percentile';
import { shuffled } from '../lib/shuffled';

const tokensPerTurn = 200;

interface TurnSample {
  turn: number;
  wallMs: number;
  ttftMs: number;
  streamingMs: number;
  overheadMs: number;
}

export const b4ProviderTransport: Benchmark = {
  id: 'B4',
  name: 'b4-provider-transport',
  title: 'persistent WebSocket vs per-request SSE (Responses API), 20-turn agent loop',
  async run(ctx): Promise<BenchReport> {
    const loops = ctx.smoke ? 1 : 4;
    const turns = ctx.smoke ? 4 : 20;
    const fake = await ChildHost.start('fake-openai');
    await fake.call('respondWith', { text: '', chunks: tokenText(tokensPerTurn), tokensPerSecond: 1000 });
    ctx.log(`${loops} loops × ${turns} turns per transport, ${tokensPerTurn} tokens per turn at the fake's 1k tokens/s, turns interleaved`);
    const samples: Record<'websocket' | 'sse', TurnSample[]> = { websocket: [], sse: [] };
    const floors: Record<'ping' | 'http', number[]> = { ping: [], http: [] };
    const floorAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const pingSocket = new WebSocket(`${fake.url.replace(/^http/, 'ws')}/responses`, { perMessageDeflate: false });
    await new Promise<void>((resolve, reject) => {
      pingSocket.once('open', () => resolve());
      pingSocket.once('error', reject);
    });
    const file = tokenText(2_000).join('');
    for (let loop = 0; loop < loops; loop++) {
      // Fresh adapters per loop: turn 1 pays connection setup, as a new agent session would.
      const providers = {
        websocket: new ResponsesProvider({ baseUrl: fake.url, apiKey: 'bench', name: 'fake', transport: 'websocket' }),
        sse: new ResponsesProvider({ baseUrl: fake.url, apiKey: 'bench', name: 'fake', transport: 'sse' }),
      };
      const conversations: Record<'websocket' | 'sse', ModelMessage[]> = {
        websocket: [{ role: 'system', content: 'You are a coding agent. '.repeat(40) }, { role: 'user', content: `File: src/tally.ts\n\n${file}` }],
        sse: [],
      };
      conversations.sse = [...conversations.websocket];
      for (let turn = 1; turn <= turns; turn++) {
        for (const step of shuffled(['websocket', 'sse', 'ping', 'http'] as const)) {
          if (step === 'ping' || step === 'http') {
            if (turn > 1) floors[step].push(step === 'ping' ? await pingRoundTrip(pingSocket) : await httpRoundTrip(fake.url, floorAgent));
            continue;
          }
          const transport = step;
          const messages = conversations[transport];
          messages.push({ role: 'user', content: `Step ${turn}: continue the refactor.` });
          const sample = await runTurn(providers[transport], messages, `loop-${loop}-${transport}`, turn);
          samples[transport].push(sample.sample);
          messages.push({ role: 'assistant', content: sample.output });
        }
      }
      await Promise.all([providers.websocket.close(), providers.sse.close()]);
    }
    pingSocket.terminate();
    floorAgent.destroy();
    const requests = await fake.call<Array<{ transport: string; path: string; bodyBytes: number }>>('requests');
    await fake.stop();

    const bytes = (transport: string) => {
      const sizes = requests.filter((r) => r.transport === transport && r.path === '/v1/responses').map((r) => r.bodyBytes);
      return sizes.reduce((a, b) => a + b, 0) / Math.max(1, sizes.length);
    };
    const describe = (transport: 'websocket' | 'sse') => {
      const all = samples[transport];
      const later = all.filter((s) => s.turn > 1);
      const first = all.filter((s) => s.turn === 1);
      return {
        transport,
        firstTurnOverheadMs: summarize(first.map((s) => s.overheadMs)),
        overheadMs: summarize(later.map((s) => s.overheadMs)),
        ttftMs: summarize(later.map((s) => s.ttftMs)),
        wallMs: summarize(later.map((s) => s.wallMs)),
        streamingMs: summarize(later.map((s) => s.streamingMs)),
        requestBytes: bytes(transport === 'websocket' ? 'ws' : 'http'),
      };
    };
    const ws = describe('websocket');
    const sse = describe('sse');
    const reduction = 1 - ws.overheadMs.p50 / sse.overheadMs.p50;
    const reductionMean = 1 - ws.overheadMs.mean / sse.overheadMs.mean;
    const floor = { websocket: summarize(floors.ping), sse: summarize(floors.http) };
    const aboveFloor = { websocket: ws.overheadMs.p50 - floor.websocket.p50, sse: sse.overheadMs.p50 - floor.sse.p50 };
    const shareAboveFloor = aboveFloor.websocket / Math.max(1e-9, aboveFloor.sse);
    return {
      tables: [
        {
          title: 'B4 per turn (ms), turns 2..N; turn 1 (connection setup) separately',
          columns: ['transport', 'turns', 'overhead p50', 'p95', 'p99', 'TTFT p50', 'TTFT p99', 'wall p50', 'turn-1 overhead p50', 'request bytes (mean)', 'floor p50', 'overhead − floor p50'],
          rows: [ws, sse].map((d) => [d.transport, d.overheadMs.n, d.overheadMs.p50, d.overheadMs.p95, d.overheadMs.p99, d.ttftMs.p50, d.ttftMs.p99, d.wallMs.p50, d.firstTurnOverheadMs.p50, d.requestBytes, floor[d.transport].p50, aboveFloor[d.transport]]),
          notes: [
            `floor = one round trip between the same two processes and nothing else: WebSocket ping → pong (p50 ${floor.websocket.p50.toFixed(3)}, p99 ${floor.websocket.p99.toFixed(3)} ms) for the WebSocket turns, an HTTP request → empty 404 on a keep-alive connection (p50 ${floor.sse.p50.toFixed(3)}, p99 ${floor.sse.p99.toFixed(3)} ms) for SSE.`,
            `over the floors the WebSocket turn costs ${(shareAboveFloor * 100).toFixed(0)}% of what the SSE turn does: the request and parsing work each transport adds to its round trip.`,
            'overhead = wall (request → done event) − streaming span (first → last text delta) = TTFT + the tail after the last token.',
            `WebSocket/SSE overhead ratio p50 ${(ws.overheadMs.p50 / sse.overheadMs.p50).toFixed(2)}, TTFT ratio p50 ${(ws.ttftMs.p50 / sse.ttftMs.p50).toFixed(2)}.`,
            'request bytes: WebSocket turns send only the new messages with previous_response_id; SSE (store: false) resends the conversation.',
          ],
        },
      ],
      targets: [
        { name: 'overhead per turn, WebSocket vs SSE (p50)', target: '≥ 80% less', actual: `${(reduction * 100).toFixed(0)}% less (mean: ${(reductionMean * 100).toFixed(0)}%)`, met: reduction >= 0.8 },
      ],
      data: { loops, turns, tokensPerTurn, websocket: ws, sse, reductionP50: reduction, reductionMean, floorMs: floor, overheadAboveFloorMs: aboveFloor, raw: samples },
    };
  },
};

/** WebSocket ping → pong between the same processes (ws answers pings itself). */
function pingRoundTrip(socket: WebSocket): Promise<number> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    socket.once('pong', () => resolve(performance.now() - t0));
    socket.ping();
  });
}

/** An HTTP request the fake answers at once with an empty 404, on a kept-alive connection. */
function httpRoundTrip(baseUrl: string, agent: http.Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(`${baseUrl}/floor`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': 2 } }, (res) => {
      res.resume();
      res.on('end', () => resolve(performance.now() - t0));
    });
    req.on('error', reject);
    req.end('{}');
  });
}

async function runTurn(provider: ResponsesProvider, messages: ModelMessage[], threadId: string, turn: number): Promise<{ sample: TurnSample; output: string }> {
  const t0 = performance.now();
  let first = 0;
  let last = 0;
  let done = 0;
  let output = '';
  const controller = new AbortController();
  for await (const event of provider.stream({ model: 'bench-model', messages: [...messages], maxOutputTokens: 4096, threadId }, controller.signal)) {
    const now = performance.now();
    if (event.type === 'text') {
      if (!first) first = now;
      last = now;
      output += event.text;
    } else if (event.type === 'done') {
      done = now;
    }
  }
  if (!done || !first) throw new Error('the turn ended without text or done');
  const streamingMs = last - first;
  return { sample: { turn, wallMs: done - t0, ttftMs: first - t0, streamingMs, overheadMs: done - t0 - streamingMs }, output };
}
