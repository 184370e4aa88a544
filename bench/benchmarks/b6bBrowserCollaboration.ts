/**
 * B6 in the browser — a key pressed in browser A until the frame in browser B that shows it.
 * Three pairs of pages in one headless Chromium, keystrokes interleaved in random order:
 * - Flint: two IDE tabs (apps/web/dist served by the real gateway, SQLite WAL file store) on the
 *   same file, through FlintClient, y-monaco and Monaco as a user has them;
 * - reference: the same Monaco with y-monaco and a y-websocket provider, through the reference
 *   Yjs server (@y/websocket-server) — bench/browser/yjs.html;
 * - floor: a keydown sent as one raw WebSocket message through a broadcast server to a page
 *   that only notes its arrival — bench/browser/chat.html.
 * Times come from the probe (bench/lib/browserProbe.ts): the keydown event's own timestamp in A,
 * and the first animation frame after B's editor changed (or B received the message).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from '@playwright/test';
import type { Benchmark, BenchReport } from '../lib/Benchmark';
import { ensureBuilt, ideWebRoot, launchProbedBrowser, serveControls, waitForQuiet } from '../lib/browserHarness';
import type { ProbeData } from '../lib/browserProbe';
import { ChildHost } from '../lib/ChildHost';
import { tokenText } from '../lib/PacedTokenServer';
import { summarize, type Summary } from '../lib/percentile';
import { shuffled } from '../lib/shuffled';
import { pause } from '../lib/until';

const seedText = tokenText(500).join('');

interface Pair {
  name: string;
  a: Page;
  b: Page;
}

type Probe = { __benchProbe: { start(): void; stop(): ProbeData } };

export const b6bBrowserCollaboration: Benchmark = {
  id: 'B6B',
  name: 'b6-browser-latency',
  title: 'keystroke latency browser A → browser B: Flint vs the reference Yjs stack vs a raw WebSocket',
  async run(ctx): Promise<BenchReport> {
    const keystrokes = ctx.smoke ? 10 : 120;
    ensureBuilt(ctx.log);
    const dataDir = mkdtempSync(join(tmpdir(), 'flint-bench-b6b-'));
    const [gateway, yjs, broadcast] = await Promise.all([
      ChildHost.start('gateway', { storeFile: join(dataDir, 'flint.sqlite'), webRoot: ideWebRoot() }),
      ChildHost.start('yjs'),
      ChildHost.start('broadcast'),
    ]);
    const controls = await serveControls();
    const { browser, context } = await launchProbedBrowser();
    const results: Array<{ name: string; latencyMs: Summary; unmatched: number }> = [];
    try {
      const pairs: Pair[] = [];
      for (const open of [() => flintPair(context, gateway), () => referencePair(context, controls.url, yjs.url), () => floorPair(context, controls.url, broadcast.url)]) {
        const pair = await open();
        pairs.push(pair);
        ctx.progress(`pages open: ${pair.name}`);
      }
      ctx.log(`${keystrokes} keystrokes per pair, interleaved in random order, ~100 ms apart`);
      for (const pair of pairs) for (const page of [pair.a, pair.b]) await page.evaluate(() => (window as unknown as Probe).__benchProbe.start());
      for (let i = 0; i < keystrokes; i++) {
        for (const pair of shuffled(pairs)) {
          // Only the page in front gets animation frames: the one that must show the key.
          await pair.b.bringToFront();
          await pair.b.evaluate(() => new Promise((resolve) => requestAnimationFrame(resolve)));
          await pair.a.keyboard.press('x');
          await pause(60 + Math.random() * 60);
        }
        ctx.progress(`keystroke ${i + 1} of ${keystrokes} in every pair`);
      }
      for (const pair of pairs) {
        // The last key may still be on its way to B: wait for it (a missing one shows as unmatched).
        await pair.b.bringToFront();
        await pair.b
          .waitForFunction((n) => (window as unknown as { __benchProbe: { shown(): number } }).__benchProbe.shown() >= n, keystrokes, { timeout: 2_000 })
          .catch(() => undefined);
      }
      for (const pair of pairs) {
        const sent = await pair.a.evaluate(() => (window as unknown as Probe).__benchProbe.stop());
        const seen = await pair.b.evaluate(() => (window as unknown as Probe).__benchProbe.stop());
        // One change in B per key in A, in order (keys are ~100 ms apart, far more than any latency).
        const n = Math.min(sent.keyAt.length, seen.shownAt.length);
        const samples = Array.from({ length: n }, (_, k) => seen.shownAt[k]! - sent.keyAt[k]!);
        results.push({ name: pair.name, latencyMs: summarize(samples), unmatched: Math.abs(sent.keyAt.length - seen.shownAt.length) });
      }
    } finally {
      await browser.close();
      await controls.close();
      await Promise.all([gateway.stop(), yjs.stop(), broadcast.stop()]);
      rmSync(dataDir, { recursive: true, force: true });
    }

    const [flint, reference, floor] = results as [(typeof results)[0], (typeof results)[0], (typeof results)[0]];
    const over = (r: (typeof results)[0], p: 'p50' | 'p99') => r.latencyMs[p] - floor.latencyMs[p];
    return {
      tables: [
        {
          title: 'B6 in the browser: key pressed in A → the frame in B that shows it (ms)',
          columns: ['pair', 'n', 'p50', 'p95', 'p99', 'max', 'over floor p50', 'over floor p99', 'ratio to reference p50', 'unmatched'],
          rows: results.map((r) => [r.name, r.latencyMs.n, r.latencyMs.p50, r.latencyMs.p95, r.latencyMs.p99, r.latencyMs.max, over(r, 'p50'), over(r, 'p99'), r.latencyMs.p50 / reference.latencyMs.p50, r.unmatched]),
          notes: [
            'from the keydown event\'s timestamp in A to the first animation frame after B\'s editor changed (floor: after B received the message); both pages in one Chromium, one clock.',
            'Flint applies remote updates once per animation frame (decision 0006); the reference applies each on arrival, and Monaco draws it on the next frame either way.',
            'Flint persists every update to SQLite (WAL) before broadcasting it; the reference server keeps documents in memory only.',
            'unmatched = keys without a change in B, or changes without a key (should be 0).',
          ],
        },
      ],
      targets: [
        { name: 'Flint over the transport floor, p50', target: '≤ 5 ms', actual: `+${over(flint, 'p50').toFixed(1)} ms`, met: over(flint, 'p50') <= 5 },
        { name: 'Flint over the transport floor, p99', target: '≤ 20 ms', actual: `+${over(flint, 'p99').toFixed(1)} ms`, met: over(flint, 'p99') <= 20 },
        { name: 'Flint vs the reference Yjs stack, p50', target: 'ratio ≤ 1', actual: `${(flint.latencyMs.p50 / reference.latencyMs.p50).toFixed(2)}×`, met: flint.latencyMs.p50 <= reference.latencyMs.p50 },
        { name: 'every key arrived once (all pairs)', target: '0 unmatched', actual: String(results.reduce((n, r) => n + r.unmatched, 0)), met: results.every((r) => r.unmatched === 0) },
      ],
      data: { keystrokes, results },
    };
  },
};

/** A types at the end of line 1 of a 2 KB file; B has the same file open. */
async function flintPair(context: BrowserContext, gateway: ChildHost): Promise<Pair> {
  const { workspaceId, token } = await gateway.call<{ workspaceId: string; token: string }>('createWorkspace', { name: 'B6', files: { 'main.ts': seedText } });
  const open = async () => {
    const page = await context.newPage();
    await page.goto(`http://127.0.0.1:${String(gateway.info.port)}/w/${workspaceId}#token=${token}`);
    await page.locator('[data-testid="tree-item"][data-path="main.ts"]').click();
    await page.locator('[data-testid="editor"] .view-lines').waitFor();
    return page;
  };
  const pair = { name: 'Flint: two IDE tabs through the gateway', a: await open(), b: await open() };
  await focusEditor(pair.a);
  await waitForQuiet(pair.b);
  return pair;
}

async function referencePair(context: BrowserContext, controlsUrl: string, serverUrl: string): Promise<Pair> {
  const open = async (seed: boolean) => {
    const page = await context.newPage();
    const query = new URLSearchParams({ server: serverUrl, room: 'b6', ...(seed ? { seed: seedText } : {}) });
    await page.goto(`${controlsUrl}/yjs.html?${query}`);
    await page.waitForFunction(() => (window as unknown as { __benchReady?: boolean }).__benchReady === true);
    await page.locator('[data-testid="editor"] .view-lines').waitFor();
    return page;
  };
  const pair = { name: 'reference: y-websocket + y-monaco, @y/websocket-server', a: await open(true), b: await open(false) };
  await focusEditor(pair.a);
  await waitForQuiet(pair.b);
  return pair;
}

async function floorPair(context: BrowserContext, controlsUrl: string, serverUrl: string): Promise<Pair> {
  const open = async () => {
    const page = await context.newPage();
    await page.goto(`${controlsUrl}/chat.html?server=${encodeURIComponent(serverUrl)}`);
    await page.waitForFunction(() => (window as unknown as { __benchReady?: boolean }).__benchReady === true);
    return page;
  };
  const pair = { name: 'floor: a raw WebSocket message through a broadcast server', a: await open(), b: await open() };
  await pair.a.locator('[data-testid="type-here"]').click();
  return pair;
}

/** The caret at the end of line 1, after the editor settled. */
async function focusEditor(page: Page): Promise<void> {
  await waitForQuiet(page);
  await page.locator('[data-testid="editor"] .view-lines').click();
  await page.keyboard.press('Control+Home');
  await page.keyboard.press('End');
}
