/**
 * What the browser benchmarks (B5, B6 in the browser) share: Debian's Chromium launched as e2e
 * does, every page instrumented by bench/lib/browserProbe.ts, the IDE and the control pages
 * (bench/browser) built when stale and served, and a wait for an editor to settle.
 *
 * BENCH_CPU_PROF=1: the IDE is built unminified (readable function names) into a scratch folder,
 * and `profilePage` records a page's main thread to bench/results/profiles/ (with CDP's
 * task/script/style/layout times printed). B5_TRACE=1 adds a Chromium trace of every thread
 * (the TypeScript worker, the compositor).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from '@playwright/test';
import { createStaticHandler } from '@flint/gateway/testing';
import { installProbe } from './browserProbe';
import { pause } from './until';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const webDist = join(repoRoot, 'apps', 'web', 'dist');
const controlsRoot = join(repoRoot, 'bench', 'browser');
const controlsDist = join(controlsRoot, 'dist');
export const profiling = process.env.BENCH_CPU_PROF === '1';
export const profileDir = join(repoRoot, 'bench', 'results', 'profiles');
const unminifiedWebDist = join(repoRoot, 'bench', 'results', 'tmp', 'web');

/** What the gateway under test serves: the IDE as `npm start` builds it (unminified when profiling). */
export function ideWebRoot(): string {
  return profiling ? unminifiedWebDist : webDist;
}

/** Chromium with every page probed; the IDE's own autocomplete is off (B8 measures it). */
export async function launchProbedBrowser(): Promise<{ browser: Browser; context: BrowserContext }> {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      ...['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      // B6 watches two pages at once: the one not in front must keep its frames and timers.
      ...(process.env.B5_JSFLAGS ? [`--js-flags=${process.env.B5_JSFLAGS}`] : []),
      ...['--disable-renderer-backgrounding', '--disable-backgrounding-occluded-windows', '--disable-background-timer-throttling'],
    ],
  });
  const context = await browser.newContext({ viewport: { width: 1360, height: 820 } });
  // tsx (esbuild keepNames) wraps functions in __name(); the page has no such helper.
  await context.addInitScript({ content: `globalThis.__name = (f) => f; (${installProbe.toString()})();` });
  await context.addInitScript(() => {
    localStorage.setItem('flint.autocomplete', 'off');
    localStorage.setItem('flint.displayName', 'Bench user');
  });
  return { browser, context };
}

export interface PageProfile {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** The page's main-thread CPU profile over the stream (Chrome DevTools Protocol). */
export async function profilePage(page: Page, label: string): Promise<PageProfile> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
  await cdp.send('Performance.enable');
  const metrics = async () => Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
  let before: Record<string, number> = {};
  return {
    start: async () => {
      before = await metrics();
      if (process.env.B5_NOCPU !== '1') await cdp.send('Profiler.start');
      if (process.env.B5_TRACE === '1') await page.context().browser()!.startTracing(page, { path: join(profileDir, `${label}.trace.json`), categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'cc', 'viz', 'gpu', 'benchmark', 'toplevel'] });
    },
    stop: async () => {
      if (process.env.B5_TRACE === '1') await page.context().browser()!.stopTracing();
      const after = await metrics();
      const delta = (name: string) => (after[name] ?? 0) - (before[name] ?? 0);
      const ms = (name: string) => `${(delta(name) * 1000).toFixed(0)} ms`;
      console.log(
        `  ${label}: ${delta('Timestamp').toFixed(2)} s; task ${ms('TaskDuration')}, script ${ms('ScriptDuration')}, style ${ms('RecalcStyleDuration')} (${delta('RecalcStyleCount')}×), layout ${ms('LayoutDuration')} (${delta('LayoutCount')}×), other tasks ${ms('TaskOtherDuration')}`,
      );
      if (process.env.B5_NOCPU === '1') return;
      const { profile } = await cdp.send('Profiler.stop');
      mkdirSync(profileDir, { recursive: true });
      const path = join(profileDir, `${label}.cpuprofile`);
      writeFileSync(path, JSON.stringify(profile));
      console.log(`  CPU profile of the page: ${path}`);
    },
  };
}

/**
 * A user prompts the agent some time after opening a file, not while the editor is still
 * starting: the TypeScript worker's first check of the program (lib.d.ts and all) takes a
 * second or more. Waits until 30 frames in a row came on time (or 10 s).
 */
export async function waitForQuiet(page: Page): Promise<void> {
  // A page behind others gets no frames at all: it would only ever reach the deadline.
  await page.bringToFront();
  await pause(1_000);
  await page.evaluate(
    () =>
      new Promise<void>((resolve) => {
        const deadline = performance.now() + 10_000;
        let last = performance.now();
        let calm = 0;
        const tick = (now: number) => {
          calm = now - last <= 20 ? calm + 1 : 0;
          last = now;
          if (calm >= 30 || now > deadline) resolve();
          else requestAnimationFrame(tick);
        };
        requestAnimationFrame(tick);
      }),
  );
}

/** Builds the IDE and the control pages when their sources are newer than their builds. */
export function ensureBuilt(log: (message: string) => void): void {
  const newest = (dir: string): number => {
    let latest = 0;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name === 'dist') continue;
      const path = join(dir, entry.name);
      latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
    }
    return latest;
  };
  const stale = (built: string, sources: string[]) => !existsSync(built) || statSync(built).mtimeMs < Math.max(...sources.map(newest));
  const webSrc = join(repoRoot, 'apps', 'web', 'src');
  const packages = readdirSync(join(repoRoot, 'packages')).map((p) => join(repoRoot, 'packages', p, 'src'));
  if (stale(join(webDist, 'index.html'), [webSrc, ...packages])) {
    log('building the web app (apps/web/dist)…');
    run(log, ['run', 'build', '-w', '@flint/web']);
  }
  if (profiling) {
    log('building the web app unminified for profiling…');
    run(log, ['run', 'build', '-w', '@flint/web', '--', '--minify', 'false', '--outDir', unminifiedWebDist]);
  }
  if (stale(join(controlsDist, 'chat.html'), [join(controlsRoot, 'src'), join(webSrc, 'editor')])) {
    log('building the control pages (bench/browser/dist)…');
    run(log, ['exec', '--', 'vite', 'build', '--config', join(controlsRoot, 'vite.config.ts')]);
  }
}

// Logs when the build is done: it blocks the event loop, so the smoke's watchdog (which counts a
// line logged as progress) must hear of it before its timer, late by the whole build, fires.
function run(log: (message: string) => void, args: string[]): void {
  const startedAt = performance.now();
  const result = spawnSync('npm', args, { cwd: repoRoot, stdio: ['ignore', 'ignore', 'inherit'] });
  if (result.status !== 0) throw new Error(`npm ${args.join(' ')} failed (${result.status})`);
  log(`built in ${((performance.now() - startedAt) / 1000).toFixed(0)} s`);
}

export async function serveControls(): Promise<{ url: string; close(): Promise<void> }> {
  // Not the IDE: these pages open sockets to peers on other ports, which its policy forbids.
  const serve = createStaticHandler(controlsDist, { pagePolicy: false });
  const server = http.createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    if (!serve(req, res, pathname)) res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
