/**
 * B1 — time to first token added by the gateway. The same client, in the same run, interleaved:
 * - direct: POST to the fake provider's Chat Completions (keep-alive), first SSE delta with text;
 * - gateway: agent.prompt over the real WebSocket to the real gateway, which streams from the
 *   same fake over real SSE; first document update that carries the agent's text;
 * - gateway, flush 0 ms: the same with `agent.flushIntervalMs = 0`, to show how much of the
 *   added time is the flush interval (DESIGN §4: ~8 ms by default);
 * - raw relay: the same client asks a raw `ws` relay (bench/servers/relayServer.ts) that POSTs
 *   to the same fake and forwards each delta: the extra process and its two loopback hops that
 *   any server between the editor and the model adds, with none of the gateway's work. The
 *   gateway's own share of the added time is its TTFT minus this one.
 * Two streams: "line first" (the model's first delta ends a line, so the stream-diff can commit
 * it at once: the pure cost of the gateway path) and "code" (a 100-character first line, as
 * generated code usually starts: what a user sees, including the stream-diff's wait for a
 * complete line). The fake and the gateways run in their own processes; the client runs here.
 */
import http from 'node:http';
import { basename } from 'node:path';
import type { FlintClient } from '@flint/client';
import { FILE_TEXT_KEY } from '@flint/protocol';
import type { Benchmark, BenchReport } from '../lib/Benchmark';
import { ChildHost } from '../lib/ChildHost';
import { RelayClient } from '../lib/RelayClient';
import { connectFlintClient, fileIdOf } from '../lib/connectFlintClient';
import { tokenText } from '../lib/PacedTokenServer';
import { medianDifference, type MedianDifference } from '../lib/bootstrap';
import { summarize, type Summary } from '../lib/percentile';
import { until } from '../lib/until';
import { shuffled } from '../lib/shuffled';

interface Arm {
  name: string;
  measure(): Promise<number>;
  samples: number[];
  /** What the gateway itself reported as TTFT (prompt received → first provider token), ms. */
  internal: number[];
}

const turnTokens = 40;

const scenarios = [
  { name: 'line first', chunks: ['\n', ...tokenText(turnTokens - 1)] },
  { name: 'code', chunks: tokenText(turnTokens) },
];

export const b1TimeToFirstToken: Benchmark = {
  id: 'B1',
  name: 'b1-ttft',
  title: 'time to first token added by the gateway',
  async run(ctx): Promise<BenchReport> {
    // B1_ITERATIONS: more prompts per arm, for an A/B against BENCH_VARIANT_ROOT.
    const iterations = ctx.smoke ? 10 : Number(process.env.B1_ITERATIONS ?? 150);
    const warmup = ctx.smoke ? 2 : 10;
    const fake = await ChildHost.start('fake-openai');
    const providerBaseUrl = fake.url;
    const [gatewayDefault, gatewayFlush0, relay] = await Promise.all([
      ChildHost.start('gateway', { providerBaseUrl }),
      ChildHost.start('gateway', { providerBaseUrl, agent: { flushIntervalMs: 0 } }),
      ChildHost.start('relay', { providerBaseUrl }),
    ]);
    // BENCH_VARIANT_ROOT: another checkout's gateway (the code before a change) as one more arm.
    const variantRoot = process.env.BENCH_VARIANT_ROOT;
    const variant = variantRoot ? await ChildHost.start('gateway', { providerBaseUrl }, variantRoot) : null;
    const relayClient = await RelayClient.connect(relay.url);
    const makeArms = async (): Promise<Arm[]> => [
      directArm(providerBaseUrl),
      await gatewayArm('gateway (flush 8 ms, default)', gatewayDefault),
      await gatewayArm('gateway (flush 0 ms)', gatewayFlush0),
      relayArm(relayClient),
      ...(variant ? [await gatewayArm(`variant: ${basename(variantRoot!)}'s gateway (flush 8 ms)`, variant)] : []),
    ];
    ctx.log(`${iterations} interleaved prompts per arm and stream (+${warmup} warm-up), ${turnTokens} tokens each at 1k tokens/s`);
    const results: Array<{ scenario: string; arm: string; ttftMs: Summary; gatewayReportedTtftMs: Summary | null; addedMs: { p50: number; p99: number } }> = [];
    const versusVariant: Array<{ scenario: string } & MedianDifference> = [];
    for (const scenario of scenarios) {
      await fake.call('respondWith', { text: '', chunks: scenario.chunks, tokensPerSecond: 1000 });
      const arms = await makeArms();
      for (let i = 0; i < warmup + iterations; i++) {
        for (const arm of shuffled(arms)) {
          const ms = await arm.measure();
          if (i >= warmup) arm.samples.push(ms);
          else arm.internal.length = 0;
        }
      }
      const direct = summarize(arms[0]!.samples);
      if (variant) versusVariant.push({ scenario: scenario.name, ...medianDifference(arms[1]!.samples, arms[arms.length - 1]!.samples) });
      for (const arm of arms) {
        const ttftMs = summarize(arm.samples);
        results.push({
          scenario: scenario.name,
          arm: arm.name,
          ttftMs,
          gatewayReportedTtftMs: arm.internal.length ? summarize(arm.internal) : null,
          addedMs: { p50: ttftMs.p50 - direct.p50, p99: ttftMs.p99 - direct.p99 },
        });
      }
    }
    relayClient.close();
    await Promise.all([fake.stop(), gatewayDefault.stop(), gatewayFlush0.stop(), relay.stop(), variant?.stop()]);

    const find = (scenario: string, arm: string) => results.find((r) => r.scenario === scenario && r.arm.startsWith(arm))!;
    const pure = find('line first', 'gateway (flush 8');
    const pure0 = find('line first', 'gateway (flush 0');
    const code = find('code', 'gateway (flush 8');
    const hop = find('line first', 'raw relay');
    const codeHop = find('code', 'raw relay');
    const ms = (v: number) => `+${v.toFixed(2)} ms`;
    return {
      tables: [
        {
          title: 'B1 TTFT at the client (ms), arms interleaved in random order',
          columns: ['stream', 'path', 'n', 'p50', 'p95', 'p99', 'max', 'added p50', 'added p99', 'ratio p50', 'gateway-reported p50'],
          rows: results.map((r) => {
            const direct = results.find((d) => d.scenario === r.scenario)!.ttftMs;
            return [r.scenario, r.arm, r.ttftMs.n, r.ttftMs.p50, r.ttftMs.p95, r.ttftMs.p99, r.ttftMs.max, r.addedMs.p50, r.addedMs.p99, r.ttftMs.p50 / direct.p50, r.gatewayReportedTtftMs?.p50 ?? null];
          }),
          notes: [
            'direct = the client reads the fake provider itself (first SSE delta with text); gateway = first document update carrying agent text.',
            '"added" = gateway percentile − direct percentile of the same stream, same run.',
            'gateway-reported = TurnInfo.ttftMs: prompt received → first provider token, as the gateway measures it (1 ms resolution).',
            '"line first": the first delta is "\\n"; "code": the first line is ~100 characters (25 tokens) long.',
            ...versusVariant.map(
              (v) => `${v.scenario}: this gateway − the variant's, p50 ${v.difference >= 0 ? '+' : ''}${v.difference.toFixed(3)} ms (95% bootstrap interval ${v.low.toFixed(3)} … ${v.high.toFixed(3)}).`,
            ),
            `raw relay = a server that does nothing but forward (its own process, two more loopback hops than direct): added p50 ${ms(hop.addedMs.p50)} (line first), ${ms(codeHop.addedMs.p50)} (code). The gateway's own work over it, p50: ${ms(pure.ttftMs.p50 - hop.ttftMs.p50)} (line first), ${ms(code.ttftMs.p50 - codeHop.ttftMs.p50)} (code).`,
          ],
        },
      ],
      targets: [
        { name: 'added TTFT p50, default config (line first)', target: '≤ +1 ms', actual: ms(pure.addedMs.p50), met: pure.addedMs.p50 <= 1 },
        { name: 'added TTFT p99, default config (line first)', target: '≤ +3 ms', actual: ms(pure.addedMs.p99), met: pure.addedMs.p99 <= 3 },
        { name: 'added TTFT p50, flush 0 ms (line first)', target: '≤ +1 ms', actual: ms(pure0.addedMs.p50), met: pure0.addedMs.p50 <= 1 },
        { name: 'added TTFT p99, flush 0 ms (line first)', target: '≤ +3 ms', actual: ms(pure0.addedMs.p99), met: pure0.addedMs.p99 <= 3 },
        { name: 'added TTFT p50, default config (code)', target: '≤ +1 ms', actual: ms(code.addedMs.p50), met: code.addedMs.p50 <= 1 },
      ],
      data: { iterations, warmup, turnTokens, results, versusVariant },
    };
  },
};

/** The client asks the fake itself, with a prompt of the same shape the gateway would send. */
function directArm(baseUrl: string): Arm {
  const agent = new http.Agent({ keepAlive: true });
  const url = new URL(`${baseUrl}/chat/completions`);
  const body = JSON.stringify({
    model: 'bench-model',
    stream: true,
    max_tokens: 4096,
    stream_options: { include_usage: true },
    temperature: 0,
    messages: [
      { role: 'system', content: 'You are Flint\'s inline code editor. '.repeat(12) },
      { role: 'user', content: 'File: main.ts\n\n<selection></selection>' },
      { role: 'user', content: 'Instruction: write the function' },
    ],
  });
  const arm: Arm = {
    name: 'direct to the fake provider',
    samples: [],
    internal: [],
    measure: () =>
      new Promise<number>((resolve, reject) => {
        const t0 = performance.now();
        let first = 0;
        const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), accept: 'text/event-stream' } }, (res) => {
          res.setEncoding('utf8');
          let buffer = '';
          res.on('data', (chunk: string) => {
            if (first) return;
            buffer += chunk;
            let end: number;
            while ((end = buffer.indexOf('\n\n')) >= 0) {
              const data = buffer.slice(6, end);
              buffer = buffer.slice(end + 2);
              if (data === '[DONE]') continue;
              const content = (JSON.parse(data) as { choices?: Array<{ delta?: { content?: string } }> }).choices?.[0]?.delta?.content;
              if (content) {
                first = performance.now();
                break;
              }
            }
          });
          res.on('end', () => (first ? resolve(first - t0) : reject(new Error('the fake sent no text'))));
        });
        req.on('error', reject);
        req.end(body);
      }),
  };
  return arm;
}

/** The client asks the raw relay, which asks the fake: first forwarded delta. */
function relayArm(client: RelayClient): Arm {
  return {
    name: 'raw relay (a server that only forwards)',
    samples: [],
    internal: [],
    measure: async () => {
      client.messageTimes.length = 0;
      client.recording = true;
      const t0 = performance.now();
      await client.stream();
      client.recording = false;
      const first = client.messageTimes[0];
      if (first === undefined) throw new Error('the relay forwarded no text');
      return first - t0;
    },
  };
}

async function gatewayArm(name: string, gateway: ChildHost): Promise<Arm> {
  const { workspaceId, token } = await gateway.call<{ workspaceId: string; token: string }>('createWorkspace', { name: 'B1', files: { 'main.ts': '' } });
  const client: FlintClient = await connectFlintClient(gateway.url, workspaceId, token);
  const fileId = fileIdOf(client, 'main.ts');
  const handle = client.openDoc(fileId);
  await handle.whenSynced();
  const text = handle.doc.getText(FILE_TEXT_KEY);
  const arm: Arm = {
    name,
    samples: [],
    internal: [],
    measure: async () => {
      let resolveFirst!: (at: number) => void;
      const firstText = new Promise<number>((resolve) => (resolveFirst = resolve));
      const observer = () => {
        if (text.length > 0) resolveFirst(performance.now());
      };
      text.observe(observer);
      const t0 = performance.now();
      const result = await client.prompt({ fileId, anchor: 0, head: 0, instruction: 'write the function' });
      if (!result.ok || !result.turnId) throw new Error(`prompt refused: ${JSON.stringify(result)}`);
      const turnId = result.turnId;
      const first = await firstText;
      text.unobserve(observer);
      await until(() => client.turns.get(turnId)?.status !== undefined && client.turns.get(turnId)?.status !== 'streaming', 'the turn to end');
      const turn = client.turns.get(turnId)!;
      if (turn.status !== 'done') throw new Error(`turn ended ${turn.status}: ${JSON.stringify(turn.error)}`);
      if (turn.ttftMs !== null) arm.internal.push(turn.ttftMs);
      // Back to an empty file, so every prompt is the same "write at an empty line" turn.
      handle.doc.transact(() => text.delete(0, text.length));
      return first - t0;
    },
  };
  return arm;
}
