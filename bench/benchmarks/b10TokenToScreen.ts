/**
 * B10 — token-to-screen lag in a collaborator's browser at 5, 50 and 1,000 tokens/s, when the
 * agent's rewrite shares nothing with the original (issue 21, decision 0020). The stream-diff
 * cannot commit such text until it knows how it aligns, so most of it first shows as provisional
 * text drawn after the agent's cursor; this measures how long a token takes to show either way.
 * Two arms in one headless Chromium, interleaved in random order per repetition:
 * - Flint: two IDE tabs on the real gateway. The prompter selects a 10-line function and asks
 *   the agent through the Ctrl-K box; the collaborator (an editor link) has the same file open,
 *   and its editor is watched (bench/lib/editorScreenProbe.ts): committed text, the provisional
 *   text injected after the agent's cursor and the provisional view zone below it all count;
 * - floor: B5's floor page (bench/browser/floor.html) receiving the same stream from the raw
 *   relay that forwards each TCP read of the provider's stream, with no gateway logic.
 * Every token carries its own marker (`tokenMarkedText`); lag = the paced provider wrote the
 * token → the start of the frame that painted it (floor: the first frame after it arrived).
 */
import type { BrowserContext, Page } from '@playwright/test';
import type { Benchmark, BenchReport, TargetCheck } from '../lib/Benchmark';
import { ensureBuilt, ideWebRoot, launchProbedBrowser, profilePage, serveControls, waitForQuiet } from '../lib/browserHarness';
import type { ProbeData } from '../lib/browserProbe';
import { ChildHost } from '../lib/ChildHost';
import { installEditorScreenProbe, type EditorScreenData, type EditorScreenProbe } from '../lib/editorScreenProbe';
import type { StreamRecord } from '../lib/PacedTokenServer';
import { gapsOf, percentile } from '../lib/percentile';
import { shuffled } from '../lib/shuffled';

type Arm = 'flint' | 'floor';
const armNames: Record<Arm, string> = {
  flint: 'Flint: prompter tab → gateway → collaborator tab',
  floor: 'floor: raw relay → page (a message per read)',
};

interface Cell {
  rate: number;
  /** Per stream: a multiple of 8, so a stream ends at a line's end. */
  tokens: number;
  repetitions: number;
}

/** Tokens per stream sized so the rewrite (≤ 20 lines) stays in the collaborator's viewport. */
const fullPlan: Cell[] = [
  { rate: 5, tokens: 32, repetitions: 3 },
  { rate: 50, tokens: 152, repetitions: 2 },
  { rate: 1000, tokens: 160, repetitions: 3 },
];
const smokePlan: Cell[] = [
  { rate: 5, tokens: 8, repetitions: 1 },
  { rate: 50, tokens: 16, repetitions: 1 },
  { rate: 1000, tokens: 40, repetitions: 1 },
];
/** How long after a stream's planned end its tokens may still reach the page (else: missed). */
const settleMs = 20_000;
/** One stream per arm before the measured ones: V8 compiles the editor's paths on a fresh page. */
const warmUp: Cell = { rate: 1000, tokens: 80, repetitions: 1 };

/** The function the agent rewrites: lines 4–13 of each file, right under the top of the editor. */
const regionFirstLine = 4;
const regionLines = 10;
function fileText(stream: number): string {
  const body = Array.from({ length: regionLines - 4 }, (_, i) => `  sum += items[${i}] * ${i + 1};`);
  const region = ['export function total(items: number[]): number {', '  let sum = 0;', ...body, '  return weigh(sum);', '}'];
  return [`// B10-stream-${stream}`, 'import { weigh } from "./weigh";', '', ...region, '', 'export const unit = 1;', ''].join('\n');
}

interface Sample {
  arm: Arm;
  rate: number;
  tokens: number;
  lagsMs: number[];
  missed: number;
  /** Flint: tokens first painted as provisional text. */
  provisional: number;
  /** Intervals between the page's animation frames from the first token written to the last painted. */
  frameGapsMs: number[];
  /** Flint: main-thread ms the screen probe itself spent per second recorded. */
  probeMsPerS: number;
}

interface Row {
  rate: number;
  arm: Arm;
  streams: number;
  n: number;
  p50: number;
  p90: number;
  max: number;
  missed: number;
  provisionalShare: number | null;
  frameP95: number;
  /** The screen probe's own main-thread ms per second (Flint): what the instrument costs the page. */
  probeMsPerS: number;
}

export const b10TokenToScreen: Benchmark = {
  id: 'B10',
  name: 'b10-token-to-screen',
  title: "token-to-screen lag in a collaborator's browser, a rewrite that shares nothing with the original: Flint vs the raw relay",
  async run(ctx): Promise<BenchReport> {
    // B10_RATES=5,50: only these cells of the plan.
    const onlyRates = process.env.B10_RATES?.split(',').map(Number);
    const plan = (ctx.smoke ? smokePlan : fullPlan).filter((cell) => !onlyRates || onlyRates.includes(cell.rate));
    const warm = !ctx.smoke;
    const flintStreams = plan.reduce((n, cell) => n + cell.repetitions, 0) + (warm ? 1 : 0);
    ensureBuilt(ctx.log);

    const provider = await ChildHost.start('paced-provider');
    const [gateway, relay] = await Promise.all([
      ChildHost.start('gateway', { providerBaseUrl: provider.url, webRoot: ideWebRoot() }),
      ChildHost.start('relay', { providerBaseUrl: provider.url, perRead: true }),
    ]);
    const controls = await serveControls();
    const { browser, context } = await launchProbedBrowser();
    await context.addInitScript({ content: `globalThis.__name = (f) => f; (${installEditorScreenProbe.toString()})();` });
    ctx.progress('servers and the browser started');

    const samples: Sample[] = [];
    try {
      const files = Object.fromEntries(Array.from({ length: flintStreams }, (_, k) => [`s${k}.ts`, fileText(k)]));
      const { workspaceId, token } = await gateway.call<{ workspaceId: string; token: string }>('createWorkspace', { name: 'B10', files });
      const editorToken = await gateway.call<string>('shareEditor', { workspaceId });
      const ide = (t: string) => `http://127.0.0.1:${String(gateway.info.port)}/w/${workspaceId}#token=${t}`;
      const prompter = await openIde(context, ide(token));
      const collaborator = await openIde(context, ide(editorToken));
      const floor = await context.newPage();
      await floor.goto(`${controls.url}/floor.html?relay=${encodeURIComponent(relay.url)}`);
      await floor.waitForFunction(() => typeof (window as unknown as { __benchStart?: unknown }).__benchStart === 'function');
      ctx.progress('prompter, collaborator and floor pages open');

      let nextFile = 0;
      const measure = async (arm: Arm, cell: Cell): Promise<Sample> => {
        await provider.call('configure', { tokens: cell.tokens, tokensPerSecond: cell.rate, markers: 'token' });
        // BENCH_CPU_PROF=1: the collaborator's main thread profiled over each of its streams.
        const profile = process.env.BENCH_CPU_PROF === '1' && arm === 'flint' ? await profilePage(collaborator, `b10-collaborator-${cell.rate}-${nextFile}`) : null;
        await profile?.start();
        const result = arm === 'flint' ? await flintStream(prompter, collaborator, `s${nextFile++}.ts`, provider, cell, ctx.progress) : await floorStream(floor, cell);
        await profile?.stop();
        const streams = await provider.call<StreamRecord[]>('streams');
        const sentAt = streams.at(-1)?.markerSentAt ?? [];
        const lagsMs: number[] = [];
        let missed = 0;
        for (let marker = 0; marker < cell.tokens; marker++) {
          const shown = result.screenAt[marker];
          const sent = sentAt[marker];
          if (shown === undefined || sent === undefined || Number.isNaN(sent)) missed++;
          else lagsMs.push(shown - sent);
        }
        const from = sentAt[0] ?? Number.NaN;
        const to = Math.max(...Object.values(result.screenAt));
        const frameGapsMs = gapsOf(result.frames.filter((t) => t >= from && t <= to));
        const recordedS = ((result.frames.at(-1) ?? 0) - (result.frames[0] ?? 0)) / 1000;
        const probeMsPerS = recordedS > 0 ? result.scanMs / recordedS : 0;
        return { arm, rate: cell.rate, tokens: cell.tokens, lagsMs, missed, provisional: result.provisional.length, frameGapsMs, probeMsPerS };
      };

      if (warm) {
        for (const arm of shuffled<Arm>(['flint', 'floor'])) await measure(arm, warmUp);
        ctx.progress('warm-up stream on both pages');
      }
      for (const cell of plan) {
        ctx.log(`${cell.rate} tokens/s: ${cell.tokens} tokens per stream, ${cell.repetitions}× each arm`);
        for (let rep = 0; rep < cell.repetitions; rep++) {
          for (const arm of shuffled<Arm>(['flint', 'floor'])) {
            samples.push(await measure(arm, cell));
            ctx.progress(`${arm}, ${cell.rate} tokens/s, repetition ${rep + 1}`);
          }
        }
      }
    } finally {
      await browser.close();
      await controls.close();
      await Promise.all([provider.stop(), gateway.stop(), relay.stop()]);
    }

    const rows: Row[] = plan.flatMap((cell) => (['floor', 'flint'] as const).map((arm) => rowOf(samples.filter((s) => s.arm === arm && s.rate === cell.rate), arm, cell.rate)));
    const floorOf = (r: Row) => rows.find((f) => f.arm === 'floor' && f.rate === r.rate)!;
    return {
      tables: [
        {
          title: "B10 token written by the provider → painted in the collaborator's editor (ms)",
          columns: ['tokens/s', 'arm', 'streams', 'n', 'p50', 'p90', 'max', '× floor p50', '× floor p90', '× floor max', '− floor p90', 'missed', 'first shown provisional', 'frame p95', 'probe ms/s'],
          rows: rows.map((r) => {
            const f = floorOf(r);
            return [String(r.rate), armNames[r.arm], String(r.streams), String(r.n), r.p50, r.p90, r.max, r.p50 / f.p50, r.p90 / f.p90, r.max / f.max, r.p90 - f.p90, String(r.missed), r.provisionalShare === null ? null : `${(r.provisionalShare * 100).toFixed(0)}%`, r.frameP95, r.arm === 'flint' ? r.probeMsPerS : null];
          }),
          notes: [
            "lag = the paced provider wrote the token → the start of the frame that painted it in the collaborator's editor (floor: the first frame after the page received it); every token carries its own marker.",
            "Flint counts the editor's text as drawn: committed (.view-lines), provisional injected after the agent's cursor, or the provisional view zone once shown.",
            'the rewrite shares nothing with the 10-line function it replaces (comment lines of markers, 8 tokens of ~8 characters a line): the stream-diff cannot align it early.',
            'first shown provisional = tokens whose first frame showed them as provisional text, not yet in the document.',
            "frame p95 = the measured page's animation-frame interval p95 from the first token written to the last painted (16.7 ms is every frame on time).",
            "probe ms/s = main-thread time the collaborator's screen probe spent reading the editor's text, per second recorded (the worst stream): the instrument's own cost.",
            'the prompter prompts through the Ctrl-K box and sits in the background; only the page being measured is in front (Chromium gives background pages no frames).',
            `missed = tokens never painted within ${settleMs / 1000} s of the stream's planned end. Streams interleaved per repetition; ${warm ? `one ${warmUp.tokens}-token warm-up stream per page first` : 'no warm-up (smoke)'}.`,
          ],
        },
      ],
      targets: targetsOf(rows, floorOf),
      data: { plan, warmUpTokens: warm ? warmUp.tokens : 0, rows, samples: samples.map(({ lagsMs, frameGapsMs, ...rest }) => ({ ...rest, lagsMs: lagsMs.map(tenth), frameGapsMs: frameGapsMs.map(tenth) })) },
    };
  },
};

/** An IDE tab signed in with `url`'s token, its editor ready (the first file opened later). */
async function openIde(context: BrowserContext, url: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(url);
  await page.locator('[data-testid="status-connection"]', { hasText: 'Connected' }).waitFor({ timeout: 30_000 });
  return page;
}

/** Shows `path` (`s<k>.ts`) in the page's editor: its first line names the stream, `B10-stream-<k>`. */
async function openFile(page: Page, path: string): Promise<void> {
  await page.bringToFront();
  await page.locator(`[data-testid="tree-item"][data-path="${path}"]`).click();
  const stream = path.slice(1, -'.ts'.length);
  await page.locator('[data-testid="editor"] .view-lines', { hasText: new RegExp(`B10-stream-${stream}(?!\\d)`) }).waitFor({ timeout: 30_000 });
}

type ScreenWindow = { __benchScreen: EditorScreenProbe };

/**
 * One agent turn: the collaborator opens the file, the prompter selects the function and types
 * the instruction, the collaborator is brought to front and starts watching, then the prompter
 * presses Enter (keys reach a background page). Ends once every token was painted and the turn
 * committed everything (no provisional text left), or `settleMs` after the stream's planned end.
 */
async function flintStream(prompter: Page, collaborator: Page, path: string, provider: ChildHost, cell: Cell, progress: (step: string) => void): Promise<EditorScreenData> {
  await openFile(collaborator, path);
  // The TypeScript worker's first check of a file takes a while: a user prompts after it.
  await waitForQuiet(collaborator);
  await openFile(prompter, path);
  await prompter.locator('[data-testid="editor"] .view-lines').click();
  await prompter.keyboard.press('Control+Home');
  for (let i = 1; i < regionFirstLine; i++) await prompter.keyboard.press('ArrowDown');
  for (let i = 0; i < regionLines; i++) await prompter.keyboard.press('Shift+ArrowDown');
  await prompter.keyboard.press('Control+k');
  await prompter.getByTestId('inline-prompt').fill('rewrite this function');
  progress(`${path} open in both tabs, the instruction typed`);

  await collaborator.bringToFront();
  await collaborator.evaluate(() => new Promise((resolve) => requestAnimationFrame(resolve)));
  const before = (await provider.call<StreamRecord[]>('streams')).length;
  await collaborator.evaluate(() => (window as unknown as ScreenWindow).__benchScreen.start());
  await prompter.keyboard.press('Enter');
  const waitMs = (cell.tokens / cell.rate) * 1000 + settleMs;
  const settled = await collaborator
    .waitForFunction(
      (n) => {
        const probe = (window as unknown as ScreenWindow).__benchScreen;
        return probe.count() >= n && !probe.provisionalShown();
      },
      cell.tokens,
      { timeout: waitMs, polling: 50 },
    )
    .then(
      () => true,
      () => false,
    );
  if (!settled && (await provider.call<StreamRecord[]>('streams')).length === before) throw new Error(`the provider got no request in ${(waitMs / 1000).toFixed(0)} s after the prompt for ${path} was sent: it did not reach the agent`);
  return collaborator.evaluate(() => (window as unknown as ScreenWindow).__benchScreen.stop());
}

/** One stream through the raw relay to B5's floor page; resolves once the page handled its end. */
async function floorStream(floor: Page, cell: Cell): Promise<EditorScreenData> {
  type FloorWindow = { __benchProbe: { start(): void; stop(): ProbeData; count(): number }; __benchStart: (tokens: number) => Promise<void> };
  await floor.bringToFront();
  await floor.evaluate(() => new Promise((resolve) => requestAnimationFrame(resolve)));
  await floor.evaluate(() => (window as unknown as FloorWindow).__benchProbe.start());
  await floor.evaluate((n) => (window as unknown as FloorWindow).__benchStart(n), cell.tokens);
  await floor.waitForFunction((n) => (window as unknown as FloorWindow).__benchProbe.count() >= n, cell.tokens, { timeout: settleMs, polling: 50 }).catch(() => undefined);
  const probe = await floor.evaluate(() => (window as unknown as FloorWindow).__benchProbe.stop());
  // The floor's marker scan is in its own message handler (bench/browser/src/relay.ts), not timed.
  return { screenAt: probe.screenAt, provisional: [], frames: probe.frames, scanMs: 0 };
}

const tenth = (ms: number) => Math.round(ms * 10) / 10;

function rowOf(samples: Sample[], arm: Arm, rate: number): Row {
  const lags = samples.flatMap((s) => s.lagsMs).sort((a, b) => a - b);
  const tokens = samples.reduce((n, s) => n + s.tokens, 0);
  return {
    rate,
    arm,
    streams: samples.length,
    n: lags.length,
    p50: percentile(lags, 50),
    p90: percentile(lags, 90),
    max: lags.at(-1) ?? Number.NaN,
    missed: samples.reduce((n, s) => n + s.missed, 0),
    provisionalShare: arm === 'flint' && tokens > 0 ? samples.reduce((n, s) => n + s.provisional, 0) / tokens : null,
    frameP95: percentile(samples.flatMap((s) => s.frameGapsMs), 95),
    probeMsPerS: Math.max(0, ...samples.map((s) => s.probeMsPerS)),
  };
}

/**
 * Decision 0020 says every character the gateway received is on screen within one flush (8 ms)
 * and one frame (16.7 ms at 60 Hz); the floor already pays the frame, so Flint's p90 may exceed
 * the floor's by at most the flush and one more frame.
 */
function targetsOf(rows: Row[], floorOf: (r: Row) => Row): TargetCheck[] {
  const flint = rows.filter((r) => r.arm === 'flint');
  const overFloorMs = 8 + 16.7;
  return [
    ...flint.map((r) => {
      const over = r.p90 - floorOf(r).p90;
      return { name: `lag p90 over the floor at ${r.rate} tokens/s (Flint)`, target: `≤ +${overFloorMs} ms (one flush + one frame, decision 0020)`, actual: `${over >= 0 ? '+' : ''}${over.toFixed(1)} ms (${r.p90.toFixed(1)} vs ${floorOf(r).p90.toFixed(1)})`, met: over <= overFloorMs };
    }),
    { name: 'tokens that never reached the screen (Flint)', target: '0', actual: String(flint.reduce((n, r) => n + r.missed, 0)), met: flint.every((r) => r.missed === 0) },
  ];
}
