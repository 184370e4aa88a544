/**
 * B13 — the cluster (issue 25): gateways sharing one PostgreSQL, joined by Redis pub/sub.
 *
 * 1. Keystroke latency A → B, arms alternating keystroke by keystroke (order shuffled per round):
 *    A and B on one gateway of a cluster of one (PostgreSQL + Redis), A and B on two gateways of
 *    one cluster, and the reference, two Hocuspocus 3 servers with the Redis extension on the same
 *    redis-server. Controls in the same rounds: one gateway alone on SQLite (what `npm start`
 *    runs), a Redis publish → subscriber (one hop between gateways) and a PostgreSQL INSERT (what
 *    "stored before anyone sees it" waits for).
 * 2. Tokens per CPU-second of the whole cluster at 1, 2 and 3 gateways (and the lone SQLite
 *    gateway): the agent streams an inline edit at a fixed rate on the first gateway while one
 *    client per gateway follows the file; CPU = every gateway process's user + system time
 *    (/proc) over the stream, Redis's and PostgreSQL's beside it. Setups shuffled per repetition.
 *
 * Cluster gateways are main.ts processes (GatewayProcesses), the lone one a ChildHost child
 * (startBenchGateway, as B2 and B6 run it); clients run in the runner process.
 */
import { FILE_TEXT_KEY, type TurnInfo } from '@flint/protocol';
import { createWorkspace, type GatewayProcess } from '@flint/gateway/testing';
import type { Benchmark, BenchContext, BenchReport } from '../lib/Benchmark';
import { ChildHost } from '../lib/ChildHost';
import { processTreeCpuMs } from '../lib/clusterCpu';
import { ClusterHarness } from '../lib/clusterHarness';
import { flintArm, hocuspocusArm, postgresFloor, redisFloor, type GatewayRef, type LatencyArm } from '../lib/clusterLatencyArms';
import { connectFlintClient, fileIdOf } from '../lib/connectFlintClient';
import { tokenText } from '../lib/PacedTokenServer';
import { median, percentile, summarize } from '../lib/percentile';
import { shuffled } from '../lib/shuffled';
import { pause, until } from '../lib/until';

const ALONE = 'Flint, one gateway alone (SQLite, no cluster)';
const ONE = 'Flint, A and B on one gateway';
const TWO = 'Flint, A and B on two gateways';
const HOCUSPOCUS = 'Hocuspocus 3 + Redis, two servers';

/** A setup of part 2: the gateways, the agent on the first. */
interface Setup {
  label: string;
  gateways: GatewayRef[];
}

interface StreamRep {
  achievedTokensPerSecond: number;
  gatewayCpuMs: number;
  agentGatewayCpuMs: number;
  redisCpuMs: number;
  postgresCpuMs: number;
  tokensPerCpuSecond: number;
}

interface Sizes {
  keys: number;
  warmupKeys: number;
  intervalMs: number;
  reps: number;
  tokens: number;
  rate: number;
}

export const b13Cluster: Benchmark = {
  id: 'B13',
  name: 'b13-cluster',
  title: 'the cluster: keystrokes across gateways vs Hocuspocus + Redis, tokens per CPU-second at 1–3 gateways',
  async run(ctx): Promise<BenchReport> {
    const rate = Number(process.env.B13_RATE ?? 2_000);
    const sizes: Sizes = {
      keys: ctx.smoke ? 30 : Number(process.env.B13_KEYS ?? 500),
      warmupKeys: ctx.smoke ? 5 : 20,
      intervalMs: 20,
      reps: ctx.smoke ? 1 : Number(process.env.B13_REPS ?? 5),
      tokens: Math.round(rate * (ctx.smoke ? 0.5 : 2)),
      rate,
    };
    const [provider, harness] = await Promise.all([ChildHost.start('paced-provider'), ClusterHarness.start()]);
    try {
      return await Promise.race([measure(ctx, harness, provider, sizes), harness.died]);
    } finally {
      await harness.stop();
    }
  },
};

async function measure(ctx: BenchContext, harness: ClusterHarness, provider: ChildHost, sizes: Sizes): Promise<BenchReport> {
  const { keys, warmupKeys, intervalMs, reps, tokens, rate } = sizes;
  await provider.call('configure', { tokens, tokensPerSecond: rate });
  const env = { FLINT_PROVIDER: 'openai-chat', OPENAI_BASE_URL: provider.url, OPENAI_API_KEY: 'bench', FLINT_MODEL_FAST: 'bench-model', NODE_ENV: 'production' };
  const t0 = performance.now();
  const [alone, clusterOf1, clusterOf2, clusterOf3, h1, h2] = await Promise.all([
    ChildHost.start('gateway', { providerBaseUrl: provider.url }),
    harness.cluster('b13one', 1, env),
    harness.cluster('b13two', 2, env),
    harness.cluster('b13three', 3, env),
    harness.hocuspocus('b13hocuspocus'),
    harness.hocuspocus('b13hocuspocus'),
  ]);
  const [aloneRef, one, two, three] = [[childGateway(alone)], clusterOf1.map(clusterGateway), clusterOf2.map(clusterGateway), clusterOf3.map(clusterGateway)];
  ctx.log(`7 gateways, 2 Hocuspocus servers, Redis and PostgreSQL up in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  // Part 1: keystrokes, one per arm per round.
  const arms = [
    await flintArm(ALONE, aloneRef[0]!, aloneRef[0]!),
    await flintArm(ONE, one[0]!, one[0]!),
    await flintArm(TWO, two[0]!, two[1]!),
    await hocuspocusArm(HOCUSPOCUS, h1, h2),
    await redisFloor(harness.redis.url),
    await postgresFloor(harness.database('b13floor')),
  ];
  ctx.log(`${keys} keystrokes per arm (+${warmupKeys} warm-up), one per arm every ${intervalMs} ms, arms shuffled each round`);
  for (let i = 0; i < warmupKeys + keys; i++) {
    const roundStart = performance.now();
    for (const arm of shuffled(arms)) {
      const ms = await arm.probe();
      if (i >= warmupKeys) arm.samples.push(ms);
    }
    if ((i + 1) % 100 === 0) ctx.progress(`keystroke round ${i + 1}`);
    await pause(Math.max(0, intervalMs - (performance.now() - roundStart)));
  }
  for (const arm of arms) await arm.close();

  // Part 2: tokens per CPU-second.
  const setups: Setup[] = [
    { label: '1, alone (SQLite)', gateways: aloneRef },
    { label: '1', gateways: one },
    { label: '2', gateways: two },
    { label: '3', gateways: three },
  ];
  const services = [harness.redis.pid, harness.postgres.pid] as const;
  const streams = new Map<Setup, StreamRep[]>(setups.map((s) => [s, []]));
  // One warm-up each in a full run: JIT, prepared statements, Redis subscriptions.
  const warmupStreams = ctx.smoke ? 0 : 1;
  ctx.log(`${reps} streams of ${tokens} tokens at ${rate} tokens/s per setup (+${warmupStreams} warm-up), setups shuffled each repetition`);
  for (let i = -warmupStreams; i < reps; i++) {
    for (const setup of shuffled(setups)) {
      const rep = await streamRep(setup.gateways, services, tokens);
      if (i >= 0) streams.get(setup)!.push(rep);
      ctx.progress(`stream ${i + 1} on ${setup.label} gateway(s)`);
    }
  }
  return report(arms, streams, sizes);
}

function clusterGateway(gateway: GatewayProcess): GatewayRef {
  return { url: `ws://127.0.0.1:${gateway.port}/ws`, pid: gateway.child.pid!, createWorkspace: (name) => createWorkspace(gateway, name) };
}

/** The lone gateway's workspaces hold what POST /api/workspaces puts in a cluster's. */
function childGateway(host: ChildHost): GatewayRef {
  return { url: host.url, pid: host.pid, createWorkspace: (name) => host.call('createWorkspace', { name, files: { 'README.md': `# ${name}\n` } }) };
}

/**
 * One inline edit of `tokens` tokens into a fresh workspace, prompted on the first gateway, a
 * FlintClient per gateway following the file. The window ends when every client has seen the
 * turn end and holds the same text.
 */
async function streamRep(gateways: GatewayRef[], services: readonly [number, number], tokens: number): Promise<StreamRep> {
  const { workspaceId, token } = await gateways[0]!.createWorkspace('B13 stream');
  const clients = await Promise.all(gateways.map((g) => connectFlintClient(g.url, workspaceId, token)));
  const fileId = fileIdOf(clients[0]!, 'README.md');
  const texts = await Promise.all(
    clients.map(async (client) => {
      const handle = client.openDoc(fileId);
      await handle.whenSynced();
      return handle.doc.getText(FILE_TEXT_KEY);
    }),
  );
  const ended = clients.map(() => new Map<string, { turn: TurnInfo; at: number }>());
  clients.forEach((client, i) => client.onTurn((turn) => turn.status !== 'streaming' && ended[i]!.set(turn.turnId, { turn, at: performance.now() })));
  const pids = [...gateways.map((g) => g.pid), ...services];
  const before = processTreeCpuMs(pids);
  const t0 = performance.now();
  const end = texts[0]!.length;
  const prompted = await clients[0]!.prompt({ fileId, anchor: end, head: end, instruction: 'write the function' });
  if (!prompted.ok || !prompted.turnId) throw new Error(`prompt refused: ${JSON.stringify(prompted)}`);
  const turnId = prompted.turnId;
  const converged = () => ended.every((turns) => turns.has(turnId)) && texts.every((t) => t.length === texts[0]!.length) && texts.every((t) => t.toString() === texts[0]!.toString());
  await until(converged, `turn ${turnId} to end and every gateway's client to hold the same text`, 60_000);
  const after = processTreeCpuMs(pids);
  for (const client of clients) client.destroy();
  const { turn, at } = ended[0]!.get(turnId)!;
  if (turn.status !== 'done' || turn.outputTokens !== tokens) throw new Error(`turn ended ${turn.status} with ${turn.outputTokens}/${tokens} tokens: ${JSON.stringify(turn.error)}`);
  if (!texts[0]!.toString().includes(tokenText(tokens).join(''))) throw new Error('the streamed text is not in the file');
  const used = after.map((ms, i) => ms - before[i]!);
  const gatewayCpuMs = used.slice(0, gateways.length).reduce((sum, ms) => sum + ms, 0);
  return {
    achievedTokensPerSecond: (tokens * 1000) / (at - t0),
    gatewayCpuMs,
    agentGatewayCpuMs: used[0]!,
    redisCpuMs: used[gateways.length]!,
    postgresCpuMs: used[gateways.length + 1]!,
    tokensPerCpuSecond: (tokens * 1000) / gatewayCpuMs,
  };
}

function report(arms: LatencyArm[], streams: Map<Setup, StreamRep[]>, sizes: Sizes): BenchReport {
  const latency = arms.map((arm) => ({ arm: arm.name, ...summarize(arm.samples), p90: percentile(arm.samples, 90) }));
  const byName = (name: string) => latency.find((l) => l.arm === name)!;
  const ratio = (a: string, b: string) => ({ p50: byName(a).p50 / byName(b).p50, p90: byName(a).p90 / byName(b).p90, p99: byName(a).p99 / byName(b).p99 });
  const acrossVsOne = ratio(TWO, ONE);
  const acrossVsHocuspocus = ratio(TWO, HOCUSPOCUS);
  const oneVsAlone = ratio(ONE, ALONE);

  const med = (rows: StreamRep[], key: keyof StreamRep) => median(rows.map((r) => r[key]));
  const cpu = [...streams].map(([setup, rows]) => ({
    gateways: setup.label,
    achievedTokensPerSecond: med(rows, 'achievedTokensPerSecond'),
    gatewayCpuMs: med(rows, 'gatewayCpuMs'),
    agentGatewayCpuMs: med(rows, 'agentGatewayCpuMs'),
    otherGatewaysCpuMs: median(rows.map((r) => r.gatewayCpuMs - r.agentGatewayCpuMs)),
    tokensPerCpuSecond: med(rows, 'tokensPerCpuSecond'),
    minTokensPerCpuSecond: Math.min(...rows.map((r) => r.tokensPerCpuSecond)),
    maxTokensPerCpuSecond: Math.max(...rows.map((r) => r.tokensPerCpuSecond)),
    redisCpuMs: med(rows, 'redisCpuMs'),
    postgresCpuMs: med(rows, 'postgresCpuMs'),
  }));
  const [aloneCpu, single] = [cpu[0]!, cpu[1]!];
  const times = (x: number) => `${x.toFixed(2)}×`;
  const noTarget = 'no target set; ratio reported';
  return {
    tables: [
      {
        title: 'B13 keystroke in A → visible in B (ms)',
        columns: ['arm', 'n', 'p50', 'p90', 'p99', 'max', 'mean'],
        rows: latency.map((l) => [l.arm, l.n, l.p50, l.p90, l.p99, l.max, l.mean]),
        notes: [
          `one character inserted at a random position of a 2 KB file in A's Y.Doc until B's Y.Text observer fires; ${sizes.keys} per arm, one per arm every ${sizes.intervalMs} ms, arms in a shuffled order each round.`,
          'in a cluster a gateway sends every update to its own sessions at once and publishes it on Redis once PostgreSQL has stored it (appends do not block; back-to-back ones share a commit); the other gateway applies it and sends it. Alone, it stores in SQLite (WAL file) before sending. Hocuspocus keeps documents in memory; on each change it publishes its state vector and the other server answers through Redis (the sync protocol: step 1 → step 2 + step 1 → step 2), so an update crosses Redis three times.',
          'floors, probed in the same rounds from the runner: a Redis PUBLISH until a subscriber on a second connection has it; a PostgreSQL INSERT of a 30-byte row (synchronous_commit off, as PostgresStore) until it returns.',
        ],
      },
      {
        title: 'B13 keystroke latency ratios',
        columns: ['', 'p50', 'p90', 'p99'],
        rows: [
          ['two gateways ÷ one gateway (b ÷ a)', acrossVsOne.p50, acrossVsOne.p90, acrossVsOne.p99],
          ['two gateways ÷ Hocuspocus + Redis (b ÷ c)', acrossVsHocuspocus.p50, acrossVsHocuspocus.p90, acrossVsHocuspocus.p99],
          ['one gateway of a cluster ÷ alone on SQLite', oneVsAlone.p50, oneVsAlone.p90, oneVsAlone.p99],
        ],
      },
      {
        title: `B13 tokens per CPU-second of the cluster, the agent streaming ${sizes.tokens} tokens at ${sizes.rate} tokens/s (median of ${sizes.reps})`,
        columns: ['gateways', 'achieved tok/s', 'gateways CPU ms', 'agent gw ms', 'other gws ms', 'tok per CPU-s', 'min', 'max', 'vs 1 gateway', 'vs alone', 'Redis CPU ms', 'PostgreSQL CPU ms'],
        rows: cpu.map((c) => [
          c.gateways,
          c.achievedTokensPerSecond,
          c.gatewayCpuMs,
          c.agentGatewayCpuMs,
          c.otherGatewaysCpuMs,
          c.tokensPerCpuSecond,
          c.minTokensPerCpuSecond,
          c.maxTokensPerCpuSecond,
          c.tokensPerCpuSecond / single.tokensPerCpuSecond,
          c.tokensPerCpuSecond / aloneCpu.tokensPerCpuSecond,
          c.redisCpuMs,
          c.postgresCpuMs,
        ]),
        notes: [
          'an inline edit into an empty line of a fresh workspace, prompted by a client on the first gateway; one FlintClient per gateway follows the file (it applies every update); the window ends when every client has seen the turn end and holds the same text.',
          "CPU = user + system of each process, its threads and descendants, from /proc over that window; tok per CPU-s = tokens ÷ all gateways' CPU seconds (Redis's and PostgreSQL's are beside it, not in it; alone they only serve the other clusters' heartbeats).",
          "agent gw = the gateway running the turn (stores each flush, sends it, publishes it and the agent's cursor); other gws = the followers' gateways together (apply, send).",
        ],
      },
    ],
    targets: [
      { name: 'keystroke across two gateways ÷ on one gateway, p50 / p90', target: noTarget, actual: `${times(acrossVsOne.p50)} / ${times(acrossVsOne.p90)}`, met: null },
      { name: 'keystroke across two gateways ÷ across two Hocuspocus servers, p50 / p90', target: noTarget, actual: `${times(acrossVsHocuspocus.p50)} / ${times(acrossVsHocuspocus.p90)}`, met: null },
      ...cpu.slice(2).map((c) => ({ name: `tokens per CPU-second at ${c.gateways} gateways ÷ at 1`, target: noTarget, actual: times(c.tokensPerCpuSecond / single.tokensPerCpuSecond), met: null })),
    ],
    data: { ...sizes, latency, acrossVsOne, acrossVsHocuspocus, oneVsAlone, cpu, raw: [...streams].map(([setup, rows]) => ({ gateways: setup.label, rows })) },
  };
}
