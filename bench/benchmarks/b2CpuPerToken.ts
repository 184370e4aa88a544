/**
 * B2 — gateway CPU per token at 1k / 5k / 20k tokens/s, against the least a server can do: a
 * raw `ws` relay that forwards every provider delta to the browser socket. Both stream from the
 * same paced provider (Chat Completions SSE) in its own process; each server runs in its own
 * process and its process.cpuUsage() is read just before the prompt and just after the client
 * saw the end, over a fixed token count. Each repetition runs every arm, in shuffled order.
 * Two gateway arms: "insert" writes into an empty file (nothing for the stream-diff to align),
 * "rewrite" replaces B5's 10-line function with the stream (the diff aligns every line against
 * what is left of the original before it lets it through).
 */
import { benchFileText, benchRegion } from '../browser/src/benchFile';
import type { Benchmark, BenchReport } from '../lib/Benchmark';
import { ChildHost } from '../lib/ChildHost';
import { cpuDelta } from '../lib/cpuDelta';
import { LightClient } from '../lib/LightClient';
import { median } from '../lib/percentile';
import { RelayClient } from '../lib/RelayClient';
import { shuffled } from '../lib/shuffled';

/** `variant…`: the gateway of BENCH_VARIANT_ROOT (another checkout), for an A/B in one run. */
type Arm = 'gateway' | 'gateway, rewrite' | 'raw ws relay' | 'variant gateway' | 'variant gateway, rewrite';

/** The file and region of the rewrite arm: B5's 400-line file, its 10-line function at line 20. */
const rewriteFile = benchFileText(400);
const rewriteRegion = benchRegion(rewriteFile);

interface Rep {
  cpuUsPerToken: number;
  userUsPerToken: number;
  systemUsPerToken: number;
  providerCpuUsPerToken: number;
  achievedTokensPerSecond: number;
}

export const b2CpuPerToken: Benchmark = {
  id: 'B2',
  name: 'b2-cpu-per-token',
  title: 'gateway CPU per token vs a raw ws relay',
  async run(ctx): Promise<BenchReport> {
    // B2_RATES=20000 and B2_REPS=9: one rate, more repetitions (an A/B with BENCH_VARIANT_ROOT).
    const rates = process.env.B2_RATES?.split(',').map(Number) ?? [1_000, 5_000, 20_000];
    const seconds = ctx.smoke ? 0.4 : 2.5;
    const reps = ctx.smoke ? 1 : Number(process.env.B2_REPS ?? 5);
    const provider = await ChildHost.start('paced-provider');
    const variantRoot = process.env.BENCH_VARIANT_ROOT;
    const [gateway, relay, variant] = await Promise.all([
      ChildHost.start('gateway', { providerBaseUrl: provider.url }),
      ChildHost.start('relay', { providerBaseUrl: provider.url }),
      variantRoot ? ChildHost.start('gateway', { providerBaseUrl: provider.url }, variantRoot) : null,
    ]);
    ctx.log(`${reps} repetitions per arm and rate, arms shuffled in each, ${seconds} s of tokens each`);
    const results: Array<{ rate: number; arm: Arm; reps: Rep[] }> = [];
    for (const rate of rates) {
      const tokens = Math.round(rate * seconds);
      await provider.call('configure', { tokens, tokensPerSecond: rate });
      const arms: Partial<Record<Arm, Rep[]>> = { gateway: [], 'gateway, rewrite': [], 'raw ws relay': [], ...(variant ? { 'variant gateway': [], 'variant gateway, rewrite': [] } : {}) };
      // One warm-up each: JIT, keep-alive sockets, SQLite statements.
      for (let i = -1; i < reps; i++) {
        for (const arm of shuffled(Object.keys(arms) as Arm[])) {
          // BENCH_CPU_PROF=1: the last repetition of each arm and rate is profiled (b2-<arm>-<rate>).
          const host = arm === 'raw ws relay' ? relay : arm.startsWith('variant') ? variant! : gateway;
          const stopProfile = i === reps - 1 ? await host.profile(`b2-${arm.replace(/\W+/g, '-')}-${rate}`) : async () => {};
          const rep = arm === 'raw ws relay' ? await relayRep(relay, provider, tokens) : await gatewayRep(host, provider, tokens, arm.endsWith('rewrite'));
          await stopProfile();
          if (i >= 0) arms[arm]!.push(rep);
        }
      }
      for (const arm of Object.keys(arms) as Arm[]) results.push({ rate, arm, reps: arms[arm]! });
    }
    await Promise.all([provider.stop(), gateway.stop(), relay.stop(), variant?.stop()]);

    const med = (reps: Rep[], key: keyof Rep) => median(reps.map((r) => r[key]));
    const rows = results.map((r) => {
      const relayRow = results.find((x) => x.rate === r.rate && x.arm === 'raw ws relay')!;
      return {
        rate: r.rate,
        arm: r.arm,
        cpuUsPerToken: med(r.reps, 'cpuUsPerToken'),
        min: Math.min(...r.reps.map((x) => x.cpuUsPerToken)),
        max: Math.max(...r.reps.map((x) => x.cpuUsPerToken)),
        userUsPerToken: med(r.reps, 'userUsPerToken'),
        systemUsPerToken: med(r.reps, 'systemUsPerToken'),
        vsRelay: med(r.reps, 'cpuUsPerToken') / med(relayRow.reps, 'cpuUsPerToken'),
        achievedTokensPerSecond: med(r.reps, 'achievedTokensPerSecond'),
        providerCpuUsPerToken: med(r.reps, 'providerCpuUsPerToken'),
      };
    });
    const gw = rows.filter((r) => r.arm === 'gateway' || r.arm === 'gateway, rewrite');
    return {
      tables: [
        {
          title: 'B2 server CPU per token (µs, median of repetitions)',
          columns: ['tokens/s', 'server', 'µs/token', 'min', 'max', 'user', 'system', 'vs relay', 'achieved tok/s', 'provider µs/token'],
          rows: rows.map((r) => [r.rate, r.arm, r.cpuUsPerToken, r.min, r.max, r.userUsPerToken, r.systemUsPerToken, r.vsRelay, r.achievedTokensPerSecond, r.providerCpuUsPerToken]),
          notes: [
            'µs/token = Δ process.cpuUsage() (user + system) of the server process ÷ tokens streamed; one session, one browser socket.',
            'the relay sends one WebSocket message per delta; the gateway coalesces deltas into one Yjs update per flush (8 ms).',
            'gateway = the agent writes into an empty file; gateway, rewrite = it replaces a 10-line function with the stream (unrelated code: the stream-diff holds each new line until ~96 newer characters show it matches nothing of the original left, aligning it against that original meanwhile).',
            'provider µs/token = the paced token source\'s own CPU, to show it is not the bottleneck.',
          ],
        },
      ],
      targets: gw.map((r) => ({
        name: `${r.arm} CPU per token at ${r.rate / 1000}k tokens/s`,
        target: '≤ 1 µs/token (aggressive)',
        actual: `${r.cpuUsPerToken.toFixed(2)} µs/token (${r.vsRelay.toFixed(2)}× the relay)`,
        met: r.cpuUsPerToken <= 1,
      })),
      data: { seconds, reps, rows, raw: results },
    };
  },
};

async function gatewayRep(gateway: ChildHost, provider: ChildHost, tokens: number, rewrite: boolean): Promise<Rep> {
  const { workspaceId, token } = await gateway.call<{ workspaceId: string; token: string }>('createWorkspace', { name: 'B2', files: { 'main.ts': rewrite ? rewriteFile : '' } });
  const client = await LightClient.connect(gateway.url, workspaceId, token);
  const fileId = client.fileId('main.ts');
  await client.sync(fileId);
  const [before, providerBefore] = await Promise.all([gateway.stats(), provider.stats()]);
  const t0 = performance.now();
  const result = rewrite ? await client.prompt(fileId, rewriteRegion.anchor, rewriteRegion.head, 'rewrite this function') : await client.prompt(fileId, 0, 0);
  if (!result.ok || !result.turnId) throw new Error(`prompt refused: ${JSON.stringify(result)}`);
  const turn = await client.whenTurnEnds(result.turnId);
  const elapsedMs = client.turnEndedAt.get(result.turnId)! - t0;
  const [after, providerAfter] = await Promise.all([gateway.stats(), provider.stats()]);
  client.close();
  if (turn.status !== 'done' || turn.outputTokens !== tokens) throw new Error(`turn ended ${turn.status} with ${turn.outputTokens}/${tokens} tokens`);
  return rep(cpuDelta(before, after), cpuDelta(providerBefore, providerAfter).totalUs, tokens, elapsedMs);
}

async function relayRep(relay: ChildHost, provider: ChildHost, tokens: number): Promise<Rep> {
  const client = await RelayClient.connect(relay.url);
  client.recording = true;
  const [before, providerBefore] = await Promise.all([relay.stats(), provider.stats()]);
  const t0 = performance.now();
  await client.stream();
  const elapsedMs = performance.now() - t0;
  const [after, providerAfter] = await Promise.all([relay.stats(), provider.stats()]);
  client.close();
  if (client.messageTimes.length !== tokens) throw new Error(`relay delivered ${client.messageTimes.length}/${tokens} tokens`);
  return rep(cpuDelta(before, after), cpuDelta(providerBefore, providerAfter).totalUs, tokens, elapsedMs);
}

function rep(cpu: ReturnType<typeof cpuDelta>, providerUs: number, tokens: number, elapsedMs: number): Rep {
  return {
    cpuUsPerToken: cpu.totalUs / tokens,
    userUsPerToken: cpu.userUs / tokens,
    systemUsPerToken: cpu.systemUs / tokens,
    providerCpuUsPerToken: providerUs / tokens,
    achievedTokensPerSecond: (tokens * 1000) / elapsedMs,
  };
}
