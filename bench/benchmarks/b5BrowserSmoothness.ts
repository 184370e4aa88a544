/**
 * B5 — browser smoothness while the agent streams. Headless Chromium (Debian's, as e2e) opens
 * a page while a paced fake provider streams 1k / 5k / 20k tokens/s into a 400-line and a
 * 20,000-line file, and a user types 7 keys/s meanwhile. Three pages, interleaved in random
 * order per cell:
 * - Flint: the real IDE (apps/web/dist served by the real gateway); the agent turn is prompted
 *   by a second client, the page renders it through Yjs → y-monaco → Monaco with the live diff;
 * - floor: a page that only receives the same stream from a raw `ws` relay that forwards each
 *   TCP read of the provider's stream as one message (the transport floor);
 * - naive: the same Monaco, configured as the IDE's, applying every token as its own edit;
 * - typing: the IDE with no agent, the user typing alone: what the editor costs by itself.
 * Each page first gets a short warm-up stream with typing (see `warmUpTokens`), then the
 * measured one. Measured in the page (bench/lib/browserProbe.ts): rAF intervals, long-animation-frame
 * blocking, Event Timing of the typed keys, and token-to-screen lag: from the provider writing a
 * line's marker to the first animation frame after that marker was in the editor (or received).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { benchFileText, benchRegion } from '../browser/src/benchFile';
import type { Benchmark, BenchReport, TargetCheck } from '../lib/Benchmark';
import { ensureBuilt, ideWebRoot, launchProbedBrowser, profileDir, profilePage, profiling, serveControls, waitForQuiet, type PageProfile } from '../lib/browserHarness';
import type { ProbeData } from '../lib/browserProbe';
import { ChildHost } from '../lib/ChildHost';
import { connectFlintClient, fileIdOf } from '../lib/connectFlintClient';
import { markedTokenText, type StreamRecord } from '../lib/PacedTokenServer';
import { gapsOf, summarize, type Summary } from '../lib/percentile';
import { shuffled } from '../lib/shuffled';
import { pause, until } from '../lib/until';


type PageKind = 'flint' | 'floor' | 'naive' | 'typing' | 'variant';
const pageNames: Record<PageKind, string> = {
  typing: 'control: Flint IDE, the user types, no agent',
  variant: 'variant: the IDE built into B5_VARIANT_ROOT (A/B)',
  flint: 'Flint IDE (gateway → Yjs → Monaco)',
  floor: 'floor: receive only (raw ws relay, a message per read)',
  naive: 'naive: one Monaco edit per token (raw ws relay, a message per token)',
};

interface Sample {
  kind: PageKind;
  lines: number;
  rate: number;
  probe: ProbeData;
  sentAt: number[];
}

interface Row {
  lines: number;
  rate: number;
  kind: PageKind;
  runs: number;
  frameMs: Summary;
  loafCount: number;
  loafMaxMs: number;
  blockingMsPerSecond: number;
  maxBlockingMs: number;
  lagMs: Summary;
  /** Provider wrote the marker → it was in the editor model (floor: received): lag before drawing. */
  toModelMs: Summary;
  missedMarkers: number;
  keys: number;
  slowKeyEvents: number;
  keyEventMaxMs: number;
}

/** B5_KEYS_PER_S=0 streams with no typing: what the stream costs the page by itself. */
const keysPerSecond = Number(process.env.B5_KEYS_PER_S ?? 7);
const keyInterval = 1000 / keysPerSecond;

/**
 * Before it is measured, every page receives one short stream (1,000 tokens in 1 s) while the
 * user types: the steady state of a session, not its first seconds. On a freshly loaded page
 * V8 is still compiling the editor's code paths in background threads (in a trace of the first
 * stream: ~2.6 s of Maglev/TurboFan CPU in 4 s), which on this 2-core machine takes the CPU
 * from the page itself. `B5_WARMUP=0` measures that first stream instead.
 */
const warmUpTokens = 1000;

interface WarmUp {
  /** 0: no warm-up. */
  tokens: number;
  /** Points the provider at the warm-up stream; `end` back at the measured one. */
  start(): Promise<unknown>;
  end(): Promise<unknown>;
}

export const b5BrowserSmoothness: Benchmark = {
  id: 'B5',
  name: 'b5-browser',
  title: 'browser smoothness while the agent streams',
  async run(ctx): Promise<BenchReport> {
    // B5_LINES / B5_RATES / B5_SECONDS / B5_REPS (comma lists) narrow a run while profiling.
    const env = (name: string) => process.env[name]?.split(',').map(Number);
    const streamSeconds = env('B5_SECONDS')?.[0] ?? (ctx.smoke ? 0.6 : 2);
    const repetitions = env('B5_REPS')?.[0] ?? (ctx.smoke ? 1 : 2);
    const sizes = env('B5_LINES') ?? (ctx.smoke ? [400] : [400, 20_000]);
    const rates = env('B5_RATES') ?? (ctx.smoke ? [5000] : [1000, 5000, 20_000]);
    const pages: PageKind[] = (process.env.B5_PAGES?.split(',') as PageKind[] | undefined) ?? ['flint', 'floor', 'naive', 'typing'];
    // B5_WARMUP=0 measures each page's first stream after loading (V8 still compiling the editor).
    const warm = process.env.B5_WARMUP !== '0';
    ensureBuilt(ctx.log);

    const provider = await ChildHost.start('paced-provider');
    const ideGateway = (webRoot: string) => ChildHost.start('gateway', { providerBaseUrl: provider.url, webRoot, contextTokens: 4_000_000, agent: { maxOutputTokens: 1_000_000 } });
    // An A/B of a web-side change: another build of the IDE (`vite build --outDir <dir>`) served
    // by its own gateway, measured as one more page kind, interleaved with the rest.
    const variantRoot = process.env.B5_VARIANT_ROOT;
    const variantGateway = variantRoot ? await ideGateway(variantRoot) : null;
    if (variantRoot && !pages.includes('variant')) pages.push('variant');
    const [gateway, relay, readRelay] = await Promise.all([
      ideGateway(ideWebRoot()),
      ChildHost.start('relay', { providerBaseUrl: provider.url }),
      ChildHost.start('relay', { providerBaseUrl: provider.url, perRead: true }),
    ]);
    const controls = await serveControls();
    const { browser, context } = await launchProbedBrowser();
    ctx.progress('servers and the browser started');

    const samples: Sample[] = [];
    try {
      for (const lines of sizes) {
        for (const rate of rates) {
          const tokens = Math.round(rate * streamSeconds);
          ctx.log(`${lines} lines, ${rate} tokens/s: ${tokens} tokens per stream, ${repetitions}× each page`);
          for (let rep = 0; rep < repetitions; rep++) {
            for (const kind of shuffled<PageKind>(pages)) {
              const warmUp: WarmUp = {
                tokens: warm ? warmUpTokens : 0,
                start: () => provider.call('configure', { tokens: warmUpTokens, tokensPerSecond: warmUpTokens, markers: true }),
                end: () => provider.call('configure', { tokens, tokensPerSecond: rate, markers: true }),
              };
              await warmUp.end();
              const page = await context.newPage();
              try {
                const recording = profiling ? await profilePage(page, `b5-${kind}-${lines}-${rate}`) : null;
                const probe =
                  kind === 'variant'
                    ? await runFlint(page, variantGateway!, lines, tokens, recording, streamSeconds, warmUp)
                    : kind === 'flint' || kind === 'typing'
                    ? await runFlint(page, gateway, lines, kind === 'flint' ? tokens : 0, recording, streamSeconds, warmUp)
                    : await runControl(page, `${controls.url}/${kind}.html?relay=${encodeURIComponent((kind === 'floor' ? readRelay : relay).url)}&lines=${lines}`, tokens, recording, warmUp);
                await recording?.stop();
                if (profiling) writeFileSync(join(profileDir, `b5-${kind}-${lines}-${rate}.loafs.json`), JSON.stringify(probe.loafs, null, 1));
                const streams = await provider.call<StreamRecord[]>('streams');
                const sentAt = kind === 'typing' ? [] : (streams.at(-1)?.markerSentAt ?? []);
                samples.push({ kind, lines, rate, probe, sentAt });
                ctx.progress(`${kind} page, ${lines} lines, ${rate} tokens/s, repetition ${rep + 1}`);
              } finally {
                await page.close();
              }
            }
          }
        }
      }
    } finally {
      await browser.close();
      await controls.close();
      await Promise.all([provider.stop(), gateway.stop(), relay.stop(), readRelay.stop(), variantGateway?.stop()]);
    }

    const rows: Row[] = [];
    for (const lines of sizes) for (const rate of rates) for (const kind of (['floor', 'typing', 'flint', 'variant', 'naive'] as const).filter((k) => pages.includes(k))) rows.push(rowOf(samples.filter((s) => s.kind === kind && s.lines === lines && s.rate === rate)));
    return {
      tables: [
        {
          title: 'B5 the page while the agent streams (frames and lag in ms)',
          columns: ['lines', 'tokens/s', 'page', 'runs', 'rAF p50', 'rAF p95', 'rAF p99', 'rAF max', 'LoAF n', 'LoAF max', 'blocking ms/s', 'lag p50', 'lag p95', 'lag p99', 'lag − floor p99', 'in model p50', 'missed', 'keys', 'keys ≥ 16 ms', 'key max'],
          rows: rows.map((r) => {
            const floor = rows.find((f) => f.kind === 'floor' && f.lines === r.lines && f.rate === r.rate);
            const lag = r.kind === 'typing' ? [null, null, null, null, null] : [r.lagMs.p50, r.lagMs.p95, r.lagMs.p99, floor ? r.lagMs.p99 - floor.lagMs.p99 : null, r.toModelMs.p50];
            return [r.lines, r.rate, pageNames[r.kind], r.runs, r.frameMs.p50, r.frameMs.p95, r.frameMs.p99, r.frameMs.max, r.loafCount, r.loafMaxMs, r.blockingMsPerSecond, ...lag, r.missedMarkers, r.keys, r.slowKeyEvents, r.keyEventMaxMs];
          }),
          notes: [
            'rAF = intervals between requestAnimationFrame callbacks while streaming (16.7 ms at 60 Hz is perfect).',
            'LoAF = long animation frames (> 50 ms) from PerformanceObserver; blocking = their blockingDuration, per second of stream.',
            'lag = provider wrote the token completing a line\'s marker → the frame that painted it: the first animation frame after it was in the editor model (floor: received), or its own frame if the editor redrew its text later in that frame.',
            'in model = provider wrote the marker → it was in the editor model (floor: received): the part of the lag before the page draws.',
            'missed = markers the provider sent that never reached the page within 5 s of the stream ending.',
            `keys = keys typed at ${keysPerSecond}/s during the stream; Event Timing reports only events ≥ 16 ms (key max: 0 = none were).`,
            'Flint and naive run the same Monaco build and options; the user types on line 3 while the agent writes from line 20.',
            warm ? `Each page was warmed up first: one ${warmUpTokens}-token stream at ${warmUpTokens} tokens/s with typing, then measured (B5_WARMUP=0: the first stream after load).` : 'No warm-up (B5_WARMUP=0): each page\'s first stream after loading.',
          ],
        },
      ],
      targets: targetsOf(rows),
      data: { streamSeconds, repetitions, warmUpTokens: warm ? warmUpTokens : 0, rows },
    };
  },
};

/**
 * The IDE page: open the file, type on line 3 while a second client prompts the agent on lines
 * 20-29. With no tokens, the control: the user types for as long as a stream would last, alone.
 */
async function runFlint(page: Page, gateway: ChildHost, lines: number, tokens: number, recording: PageProfile | null, seconds: number, warmUp: WarmUp): Promise<ProbeData> {
  const fileText = benchFileText(lines);
  const { workspaceId, token } = await gateway.call<{ workspaceId: string; token: string }>('createWorkspace', { name: 'B5', files: { 'main.ts': fileText } });
  const client = await connectFlintClient(gateway.url, workspaceId, token);
  try {
    const fileId = fileIdOf(client, 'main.ts');
    await page.goto(`http://127.0.0.1:${String(gateway.info.port)}/w/${workspaceId}#token=${token}`);
    await page.locator('[data-testid="tree-item"][data-path="main.ts"]').click();
    await page.locator('[data-testid="editor"] .view-lines').waitFor();
    await placeCaretOnLine3(page);
    const region = benchRegion(fileText);
    /** The agent rewrites lines 20-29 while the user types; resolves with the finished turn's id. */
    const rewriteWhileTyping = async (): Promise<string> => {
      const result = await client.prompt({
        fileId,
        anchor: region.anchor,
        head: region.head,
        instruction: 'rewrite this function',
      });
      if (!result.ok || !result.turnId) throw new Error(`prompt refused: ${JSON.stringify(result)}`);
      const turnId = result.turnId;
      let streaming = true;
      const typing = typeWhile(page, () => streaming);
      await until(() => (client.turns.get(turnId)?.status ?? 'streaming') !== 'streaming', 'the agent turn to end', 60_000, 10);
      streaming = false;
      await typing;
      const turn = client.turns.get(turnId)!;
      if (turn.status !== 'done') throw new Error(`turn ended ${turn.status}: ${JSON.stringify(turn.error)}`);
      return turnId;
    };
    /** The user types for `ms` (the typing control's stream, with nobody streaming). */
    const typeFor = (ms: number) => {
      if (keysPerSecond <= 0) return pause(ms);
      const end = performance.now() + ms;
      return typeWhile(page, () => performance.now() < end);
    };
    if (warmUp.tokens > 0) {
      if (tokens === 0) await typeFor((warmUp.tokens / warmUpTokens) * 1000);
      else {
        await warmUp.start();
        // Rejected: the measured turn rewrites the same original, once the page shows it back.
        client.review(fileId, { turnId: await rewriteWhileTyping() }, 'reject');
        await page.locator('.flint-inserted-line').first().waitFor({ state: 'detached' });
        await warmUp.end();
      }
    }
    await recording?.start();
    await page.evaluate(() => (window as unknown as { __benchProbe: { start(): void } }).__benchProbe.start());
    if (tokens === 0) {
      await typeFor(seconds * 1000);
      return await settle(page, 0);
    }
    await rewriteWhileTyping();
    return await settle(page, tokens);
  } finally {
    client.destroy();
  }
}

/** A control page: start its relay stream, type meanwhile, collect. */
async function runControl(page: Page, url: string, tokens: number, recording: PageProfile | null, warmUp: WarmUp): Promise<ProbeData> {
  await page.goto(url);
  await page.waitForFunction(() => typeof (window as unknown as { __benchStart?: unknown }).__benchStart === 'function');
  if (url.includes('/naive.html')) {
    await page.locator('[data-testid="editor"] .view-lines').waitFor();
    await placeCaretOnLine3(page);
  } else {
    await waitForQuiet(page);
    await page.locator('[data-testid="type-here"]').click();
  }
  const streamWhileTyping = async (n: number) => {
    let streaming = true;
    const stream = page.evaluate((count) => (window as unknown as { __benchStart: (tokens: number) => Promise<void> }).__benchStart(count), n);
    const typing = typeWhile(page, () => streaming);
    await stream;
    streaming = false;
    await typing;
  };
  if (warmUp.tokens > 0) {
    await warmUp.start();
    // Resolves once the page itself handled the stream's last message.
    await streamWhileTyping(warmUp.tokens);
    await warmUp.end();
  }
  await recording?.start();
  await page.evaluate(() => (window as unknown as { __benchProbe: { start(): void } }).__benchProbe.start());
  await streamWhileTyping(tokens);
  return settle(page, tokens);
}

async function placeCaretOnLine3(page: Page): Promise<void> {
  await waitForQuiet(page);
  await page.locator('[data-testid="editor"] .view-lines').click();
  await page.keyboard.press('Control+Home');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('End');
}

/** Types letters at 7 keys/s until the stream ends, as a user would keep working. */
async function typeWhile(page: Page, going: () => boolean): Promise<void> {
  const letters = 'flint';
  if (keysPerSecond <= 0) return;
  for (let i = 0; going(); i++) {
    const next = performance.now() + keyInterval;
    await page.keyboard.press(letters[i % letters.length]!);
    await pause(Math.max(0, next - performance.now()));
  }
}

/** Waits (≤ 5 s) for every marker to reach the screen, then stops recording. */
async function settle(page: Page, tokens: number): Promise<ProbeData> {
  const expected = tokens === 0 ? 0 : markedTokenText(tokens).markers;
  await page
    .waitForFunction((n) => (window as unknown as { __benchProbe: { count(): number } }).__benchProbe.count() >= n, expected, { timeout: 5_000, polling: 50 })
    .catch(() => undefined);
  return page.evaluate(() => (window as unknown as { __benchProbe: { stop(): ProbeData } }).__benchProbe.stop());
}

function rowOf(samples: Sample[]): Row {
  const first = samples[0]!;
  const frames: number[] = [];
  const lags: number[] = [];
  const toModel: number[] = [];
  let missed = 0;
  let loafCount = 0;
  let loafMax = 0;
  let blocking = 0;
  let maxBlocking = 0;
  let streamMs = 0;
  let keys = 0;
  const keyEvents: number[] = [];
  for (const s of samples) {
    frames.push(...gapsOf(s.probe.frames));
    streamMs += (s.probe.frames.at(-1) ?? 0) - (s.probe.frames[0] ?? 0);
    for (let marker = 0; marker < s.sentAt.length; marker++) {
      const shown = s.probe.screenAt[marker];
      const sent = s.sentAt[marker]!;
      if (shown === undefined || Number.isNaN(sent)) missed++;
      else lags.push(shown - sent);
      const present = s.probe.presentAt[marker];
      if (present !== undefined && !Number.isNaN(sent)) toModel.push(present - sent);
    }
    for (const loaf of s.probe.loafs) {
      loafCount++;
      loafMax = Math.max(loafMax, loaf.duration);
      blocking += loaf.blocking;
      maxBlocking = Math.max(maxBlocking, loaf.blocking);
    }
    keys += s.probe.keys;
    keyEvents.push(...s.probe.events.map((e) => e.duration));
  }
  return {
    lines: first.lines,
    rate: first.rate,
    kind: first.kind,
    runs: samples.length,
    frameMs: summarize(frames),
    loafCount,
    loafMaxMs: loafMax,
    blockingMsPerSecond: streamMs > 0 ? blocking / (streamMs / 1000) : 0,
    maxBlockingMs: maxBlocking,
    lagMs: summarize(lags),
    toModelMs: summarize(toModel),
    missedMarkers: missed,
    keys,
    slowKeyEvents: keyEvents.length,
    keyEventMaxMs: keyEvents.length ? Math.max(...keyEvents) : 0,
  };
}

function targetsOf(rows: Row[]): TargetCheck[] {
  const flint = rows.filter((r) => r.kind === 'flint');
  if (flint.length === 0) return [];
  const worst = <T>(pick: (r: Row) => number, label: (r: Row, v: number) => T) => {
    const r = flint.reduce((a, b) => (pick(b) > pick(a) ? b : a));
    return label(r, pick(r));
  };
  const at = (r: Row) => `${r.lines} lines, ${r.rate} tok/s`;
  const lagOverFloor = (r: Row) => r.lagMs.p99 - (rows.find((f) => f.kind === 'floor' && f.lines === r.lines && f.rate === r.rate)?.lagMs.p99 ?? 0);
  const rafP95 = worst((r) => r.frameMs.p95, (r, v) => ({ v, where: at(r) }));
  const loaf = worst((r) => r.loafMaxMs, (r, v) => ({ v, where: at(r) }));
  const lag = worst(lagOverFloor, (r, v) => ({ v, where: at(r) }));
  const keys = worst((r) => r.keyEventMaxMs, (r, v) => ({ v, where: at(r) }));
  const missed = flint.reduce((n, r) => n + r.missedMarkers, 0);
  return [
    { name: 'rAF interval p95, worst cell (Flint)', target: '≤ 20 ms', actual: `${rafP95.v.toFixed(1)} ms (${rafP95.where})`, met: rafP95.v <= 20 },
    { name: 'longest animation frame, worst cell (Flint)', target: 'none > 50 ms', actual: loaf.v === 0 ? 'none > 50 ms' : `${loaf.v.toFixed(0)} ms (${loaf.where})`, met: loaf.v <= 50 },
    { name: 'token-to-screen lag p99 over the floor, worst cell (Flint)', target: '≤ floor + 35 ms', actual: `+${lag.v.toFixed(1)} ms (${lag.where})`, met: lag.v <= 35 },
    { name: 'typing: longest key event, worst cell (Flint)', target: '< 50 ms', actual: keys.v === 0 ? 'all < 16 ms' : `${keys.v.toFixed(0)} ms (${keys.where})`, met: keys.v < 50 },
    { name: 'markers that never reached the screen (Flint)', target: '0', actual: String(missed), met: missed === 0 },
  ];
}

