/**
 * B3 — throughput and smoothness under load: one session unthrottled, then 10 / 100 / 1,000
 * concurrent sessions at 1k tokens/s each (and 100 at 5k), each session in its own workspace,
 * prompting at the same moment. The peer at every level is the raw ws relay under the same
 * load. Reported: delivered tokens/s in total, gaps between the updates a client receives
 * (p50/p99/max), the server's CPU use, and memory per session.
 * Sessions are LightClients (they timestamp updates without applying them, so the load
 * generator is not the bottleneck) plus one real FlintClient per level whose final text is
 * checked against what the provider streamed.
 */
import { basename } from 'node:path';
import type { FlintClient } from '@flint/client';
import { FILE_TEXT_KEY } from '@flint/protocol';
import type { Benchmark, BenchReport } from '../lib/Benchmark';
import { ChildHost, type ProcessStats } from '../lib/ChildHost';
import { connectFlintClient, fileIdOf } from '../lib/connectFlintClient';
import { cpuDelta } from '../lib/cpuDelta';
import { LightClient } from '../lib/LightClient';
import { tokenText } from '../lib/PacedTokenServer';
import { gapsOf, summarize, type Summary } from '../lib/percentile';
import { RelayClient } from '../lib/RelayClient';
import { until } from '../lib/until';

interface Level {
  name: string;
  sessions: number;
  /** Per session; null: unthrottled. */
  tokensPerSecond: number | null;
  tokensPerSession: number;
  /** Runs per server, the median one reported (one short stream swings with the machine). Default 1. */
  runs?: number;
}

interface LevelResult {
  level: string;
  server: string;
  sessions: number;
  offeredTokensPerSecond: number | null;
  deliveredTokensPerSecond: number;
  wallMs: number;
  gapMs: Summary;
  serverCpuPercent: number;
  /** Tokens delivered per second of server CPU: capacity per core, whatever else the machine runs. */
  tokensPerCpuSecond: number;
  /** CPU % of the token source and of this process (the load generator): who else was busy. */
  providerCpuPercent: number;
  loadGeneratorCpuPercent: number;
  /** The server's event-loop delay over the window: how late its timers could fire. */
  serverLoopDelayP99Ms: number;
  rssPerSessionKiB: number;
  heapPerSessionKiB: number;
  checked: string;
  /** With `Level.runs`: every run's delivered tokens/s, in order (this row is their median). */
  runsDelivered?: number[];
}

export const b3Throughput: Benchmark = {
  id: 'B3',
  name: 'b3-throughput',
  title: 'throughput, flush gaps and memory under concurrent sessions',
  async run(ctx): Promise<BenchReport> {
    const allLevels: Level[] = ctx.smoke
      ? [
          { name: '1 session, unthrottled', sessions: 1, tokensPerSecond: null, tokensPerSession: 20_000 },
          { name: '10 × 1k tok/s', sessions: 10, tokensPerSecond: 1_000, tokensPerSession: 500 },
        ]
      : [
          { name: '1 session, unthrottled', sessions: 1, tokensPerSecond: null, tokensPerSession: 200_000, runs: 5 },
          { name: '10 × 1k tok/s', sessions: 10, tokensPerSecond: 1_000, tokensPerSession: 4_000 },
          { name: '100 × 1k tok/s', sessions: 100, tokensPerSecond: 1_000, tokensPerSession: 4_000 },
          { name: '100 × 5k tok/s', sessions: 100, tokensPerSecond: 5_000, tokensPerSession: 15_000 },
          { name: '1,000 × 1k tok/s', sessions: 1_000, tokensPerSecond: 1_000, tokensPerSession: 3_000 },
        ];
    // B3_LEVELS=0,3: only these levels (by index in the list above), to rerun one while working.
    const picked = process.env.B3_LEVELS?.split(',').map(Number);
    const levels = picked ? allLevels.filter((_, i) => picked.includes(i)) : allLevels;
    const results: LevelResult[] = [];
    const variantRoot = process.env.BENCH_VARIANT_ROOT;
    for (const [index, level] of levels.entries()) {
      // A fresh provider and fresh servers per level: no level inherits another's rooms or sockets.
      const provider = await ChildHost.start('paced-provider');
      await provider.call('configure', { tokens: level.tokensPerSession, tokensPerSecond: level.tokensPerSecond });
      // BENCH_VARIANT_ROOT: the gateway of another checkout runs each level too (an A/B in one run).
      const servers = variantRoot ? (['gateway', 'variant', 'relay'] as const) : (['gateway', 'relay'] as const);
      const runs = new Map<string, LevelResult[]>(servers.map((server) => [server, []]));
      const count = level.runs ?? 1;
      for (let run = 0; run < count; run++) {
        for (const server of servers.map((_, i) => servers[(i + index + run) % servers.length]!)) {
          ctx.log(`${level.name}: ${server}${count > 1 ? ` (run ${run + 1} of ${count})` : ''}`);
          runs.get(server)!.push(server === 'relay' ? await relayLevel(level, provider) : await gatewayLevel(level, provider, server === 'variant' ? variantRoot : undefined));
        }
      }
      for (const server of servers) {
        const all = runs.get(server)!;
        const byDelivered = [...all].sort((a, b) => a.deliveredTokensPerSecond - b.deliveredTokensPerSecond);
        const middle = byDelivered[(byDelivered.length - 1) >> 1]!;
        results.push(count > 1 ? { ...middle, runsDelivered: all.map((r) => r.deliveredTokensPerSecond) } : middle);
      }
      await provider.stop();
    }

    const find = (level: string, server: string) => results.find((r) => r.level === level && r.server === server);
    const unthrottled = find(allLevels[0]!.name, 'gateway');
    const hot = find('100 × 5k tok/s', 'gateway');
    return {
      tables: [
        {
          title: 'B3 throughput and gaps between updates seen by clients',
          columns: ['level', 'server', 'offered tok/s', 'delivered tok/s', 'gap p50 ms', 'gap p99 ms', 'gap max ms', 'server CPU %', 'server loop delay p99 ms', 'tok per CPU-s', 'provider CPU %', 'clients CPU %', 'RSS/session KiB', 'heap/session KiB', 'check'],
          rows: results.map((r) => [
            r.level,
            r.server,
            r.offeredTokensPerSecond ?? 'unthrottled',
            r.deliveredTokensPerSecond,
            r.gapMs.p50,
            r.gapMs.p99,
            r.gapMs.max,
            r.serverCpuPercent,
            r.serverLoopDelayP99Ms,
            r.tokensPerCpuSecond,
            r.providerCpuPercent,
            r.loadGeneratorCpuPercent,
            r.rssPerSessionKiB,
            r.heapPerSessionKiB,
            r.checked,
          ]),
          notes: [
            'delivered = tokens of all finished turns ÷ (last turn end − prompts sent), at the clients.',
            'gap = time between successive document updates (gateway) or messages (relay) one client received, pooled over clients.',
            'server CPU % = Δ process.cpuUsage ÷ wall time (100% = one core; the machine has 2, shared); tok per CPU-s = tokens ÷ server CPU seconds: capacity per core.',
            'provider / clients CPU % = the token source and the load generator (this process) over the same window: when server CPU % stays well under 100 while delivery falls behind, the machine, not the server, is saturated.',
            'server loop delay = event-loop delay of the server process over the window: the agent flushes on a timer, so no flush can come sooner.',
            'memory/session = (RSS or heapUsed mid-stream − before the sessions connected, after GC) ÷ sessions.',
            ...results
              .filter((r) => r.runsDelivered)
              .map((r) => `${r.level}, ${r.server}: the median of ${r.runsDelivered!.length} runs (a fresh server each), delivered ${r.runsDelivered!.map((v) => Math.round(v / 1000)).join(' / ')}k tokens/s.`),
          ],
        },
      ],
      targets: [
        unthrottled
          ? {
              name: 'total throughput, 1 session unthrottled',
              target: '≥ 1,000,000 tokens/s',
              actual: `${Math.round(unthrottled.deliveredTokensPerSecond).toLocaleString('en-US')} tokens/s`,
              met: unthrottled.deliveredTokensPerSecond >= 1_000_000,
            }
          : { name: 'total throughput, 1 session unthrottled', target: '≥ 1,000,000 tokens/s', actual: 'not run (B3_LEVELS)', met: null },
        ...(hot
          ? [{ name: 'p99 gap at 100 sessions × 5k tokens/s', target: '< 20 ms', actual: `${hot.gapMs.p99.toFixed(1)} ms`, met: hot.gapMs.p99 < 20 }]
          : [{ name: 'p99 gap at 100 sessions × 5k tokens/s', target: '< 20 ms', actual: ctx.smoke ? 'not run in smoke' : 'not run (B3_LEVELS)', met: null }]),
      ],
      data: { levels, results },
    };
  },
};

async function connectAll<T>(count: number, connect: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < count; i += 50) {
    out.push(...(await Promise.all(Array.from({ length: Math.min(50, count - i) }, (_, j) => connect(i + j)))));
  }
  return out;
}

async function gatewayLevel(level: Level, provider: ChildHost, variantRoot?: string): Promise<LevelResult> {
  const gateway = await ChildHost.start('gateway', { providerBaseUrl: provider.url }, variantRoot);
  const workspaces = await gateway.call<Array<{ workspaceId: string; token: string }>>('createWorkspaces', { count: level.sessions, files: { 'main.ts': '' } });
  const base = await gateway.stats(true);
  // Session 0 is a real FlintClient that applies every update; the rest only timestamp them.
  const full = await connectFlintClient(gateway.url, workspaces[0]!.workspaceId, workspaces[0]!.token);
  const fullFile = fileIdOf(full, 'main.ts');
  const fullHandle = full.openDoc(fullFile);
  await fullHandle.whenSynced();
  const fullTimes: number[] = [];
  fullHandle.doc.on('update', (_update: Uint8Array, origin: unknown) => {
    if (origin === full) fullTimes.push(performance.now());
  });
  const light = await connectAll(level.sessions - 1, async (i) => {
    const { workspaceId, token } = workspaces[i + 1]!;
    const client = await LightClient.connect(gateway.url, workspaceId, token);
    const fileId = client.fileId('main.ts');
    await client.sync(fileId);
    client.recording = true;
    return { client, fileId };
  });
  let mid: ProcessStats | null = null;
  const stopProfile = await gateway.profile(`b3-${variantRoot ? 'variant' : 'gateway'}-${level.sessions}x${level.tokensPerSecond ?? 'max'}`);
  const [before, providerBefore] = await Promise.all([gateway.stats(false, true), provider.stats()]);
  const selfBefore = process.cpuUsage();
  const t0 = performance.now();
  const prompts = await Promise.all([
    full.prompt({ fileId: fullFile, anchor: 0, head: 0, instruction: 'write the module' }),
    ...light.map(({ client, fileId }) => client.prompt(fileId, 0, 0, 'write the module')),
  ]);
  const turnIds = prompts.map((p) => {
    if (!p.ok || !('turnId' in p) || !p.turnId) throw new Error(`prompt refused: ${JSON.stringify(p)}`);
    return p.turnId;
  });
  const expectedMs = level.tokensPerSecond ? (level.tokensPerSession / level.tokensPerSecond) * 1000 : 0;
  const midTimer = setTimeout(() => void gateway.stats().then((s) => (mid = s), () => undefined), expectedMs / 2);
  const ends = await Promise.all(light.map(({ client }, i) => client.whenTurnEnds(turnIds[i + 1]!, 300_000).then((turn) => ({ turn, at: client.turnEndedAt.get(turn.turnId)! }))));
  const fullTurnId = turnIds[0]!;
  await until(() => ['done', 'failed', 'cancelled'].includes(full.turns.get(fullTurnId)?.status ?? ''), 'the full client turn to end', 300_000);
  const fullEnd = performance.now();
  clearTimeout(midTimer);
  const selfCpu = process.cpuUsage(selfBefore);
  const [after, providerAfter] = await Promise.all([gateway.stats(), provider.stats()]);
  await stopProfile();
  mid ??= after;
  const lastEnd = Math.max(fullEnd, ...ends.map((e) => e.at));
  const turns = [full.turns.get(fullTurnId)!, ...ends.map((e) => e.turn)];
  const failed = turns.filter((t) => t.status !== 'done');
  const expectedText = tokenText(level.tokensPerSession).join('');
  const textOk = fullHandle.doc.getText(FILE_TEXT_KEY).toString() === expectedText;
  const gaps = [...gapsOf(fullTimes), ...light.flatMap(({ client, fileId }) => gapsOf(client.updateTimes.get(fileId) ?? []))];
  const tokens = turns.reduce((sum, t) => sum + (t.status === 'done' ? t.outputTokens : 0), 0);
  const wallMs = lastEnd - t0;
  full.destroy();
  for (const { client } of light) client.close();
  await gateway.stop();
  return {
    level: level.name,
    server: variantRoot ? `variant: ${basename(variantRoot)}'s gateway` : 'gateway',
    sessions: level.sessions,
    ...measured({ level, tokens, wallMs, gaps, base, mid, before, after, providerBefore, providerAfter, selfCpu }),
    checked: failed.length > 0 ? `${failed.length} turns ${failed[0]!.status}` : textOk ? 'text ok' : 'TEXT MISMATCH',
  };
}

async function relayLevel(level: Level, provider: ChildHost): Promise<LevelResult> {
  const relay = await ChildHost.start('relay', { providerBaseUrl: provider.url });
  const base = await relay.stats(true);
  const clients = await connectAll(level.sessions, () => RelayClient.connect(relay.url));
  for (const client of clients) client.recording = true;
  let mid: ProcessStats | null = null;
  const stopProfile = await relay.profile(`b3-relay-${level.sessions}x${level.tokensPerSecond ?? 'max'}`);
  const [before, providerBefore] = await Promise.all([relay.stats(false, true), provider.stats()]);
  const selfBefore = process.cpuUsage();
  const t0 = performance.now();
  const expectedMs = level.tokensPerSecond ? (level.tokensPerSession / level.tokensPerSecond) * 1000 : 0;
  const midTimer = setTimeout(() => void relay.stats().then((s) => (mid = s), () => undefined), expectedMs / 2);
  const ends = await Promise.all(clients.map((client) => client.stream(300_000).then(() => performance.now())));
  clearTimeout(midTimer);
  const selfCpu = process.cpuUsage(selfBefore);
  const [after, providerAfter] = await Promise.all([relay.stats(), provider.stats()]);
  await stopProfile();
  mid ??= after;
  const wallMs = Math.max(...ends) - t0;
  const tokens = clients.reduce((sum, c) => sum + c.messageTimes.length, 0);
  const gaps = clients.flatMap((c) => gapsOf(c.messageTimes));
  for (const client of clients) client.close();
  await relay.stop();
  return {
    level: level.name,
    server: 'raw ws relay',
    sessions: level.sessions,
    ...measured({ level, tokens, wallMs, gaps, base, mid, before, after, providerBefore, providerAfter, selfCpu }),
    checked: tokens === level.tokensPerSession * level.sessions ? 'all tokens' : `${tokens}/${level.tokensPerSession * level.sessions} tokens`,
  };
}

/** The numbers both arms report, from the same snapshots, so the rows compare like for like. */
function measured(m: {
  level: Level;
  tokens: number;
  wallMs: number;
  gaps: number[];
  base: ProcessStats;
  mid: ProcessStats;
  before: ProcessStats;
  after: ProcessStats;
  providerBefore: ProcessStats;
  providerAfter: ProcessStats;
  selfCpu: NodeJS.CpuUsage;
}) {
  const { level, tokens, wallMs } = m;
  const serverCpuUs = cpuDelta(m.before, m.after).totalUs;
  return {
    offeredTokensPerSecond: level.tokensPerSecond === null ? null : level.tokensPerSecond * level.sessions,
    deliveredTokensPerSecond: (tokens * 1000) / wallMs,
    wallMs,
    gapMs: summarize(m.gaps),
    serverCpuPercent: (serverCpuUs / 1000 / wallMs) * 100,
    tokensPerCpuSecond: tokens / (serverCpuUs / 1e6),
    providerCpuPercent: (cpuDelta(m.providerBefore, m.providerAfter).totalUs / 1000 / wallMs) * 100,
    loadGeneratorCpuPercent: ((m.selfCpu.user + m.selfCpu.system) / 1000 / wallMs) * 100,
    serverLoopDelayP99Ms: m.after.eventLoopDelayMs.p99,
    rssPerSessionKiB: (m.mid.memory.rss - m.base.memory.rss) / 1024 / level.sessions,
    heapPerSessionKiB: (m.mid.memory.heapUsed - m.base.memory.heapUsed) / 1024 / level.sessions,
  };
}
