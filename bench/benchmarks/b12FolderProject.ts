/**
 * B12 — a 5,000-file repository opened as a folder project (issue 24), as a user does it:
 * `npm start -- <folder>`'s gateway (apps/gateway/src/main.ts, spawned as scripts/start.mjs
 * spawns it, bench/lib/FolderGateway.ts) and its owner link in headless Chromium.
 * A git repository is generated once per run (bench/lib/syntheticRepo.ts: nested src/ folders of
 * 1–8 KB TypeScript files, JSON, Markdown, a few binary and CRLF files, and a .gitignore'd
 * node_modules/ of thousands more that must not be read), then, interleaved in random order per
 * repetition:
 * - cold: the folder opened with a fresh data folder (every file imported), and warm: opened
 *   again with that data folder (reconciled against what is stored);
 * - one file: a committed folder holding one README, a fresh data folder: what starting the
 *   gateway and loading the IDE cost with (almost) nothing to open;
 * - floors: `git ls-files`, `git status --porcelain`, and a plain Node walk reading every tracked
 *   file (readdir + readFile, in this process) on the same repository.
 * Each open: spawn → owner link printed (and main.ts's `"folder opened"` ms) → the page shows a
 * tree holding every file, with rows painted (bench/lib/treeProbe.ts; the tree is virtualised); then the gateway's memory after a
 * full GC with the page connected and again after it left, its peak RSS, and `flint_docs_loaded`.
 * Client arms (issue 36, bench/lib/clientTreeArms.ts): spawn → a FlintClient holds the whole
 * tree, no browser, for the one-file folder, the repository cold and warm, and a large one
 * (B12_LARGE files, 50,000 in the full run, none in the smoke), beside their floors.
 * B12_CLIENT=only runs only those.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from '@playwright/test';
import type { Benchmark, BenchReport } from '../lib/Benchmark';
import { ensureBuilt, ideWebRoot, launchProbedBrowser, profileDir, profilePage, profiling } from '../lib/browserHarness';
import { epochNow, FolderGateway } from '../lib/FolderGateway';
import { clientFloor, clientTreeReport, openForClient, type ClientFloor, type ClientRun } from '../lib/clientTreeArms';
import { folderProjectReport, type FloorRun, type OpenArm, type OpenRun } from '../lib/folderProjectReport';
import { shuffled } from '../lib/shuffled';
import { generateRepo, oneFileRepo, type SyntheticRepo } from '../lib/syntheticRepo';
import { installTreeProbe, type TreeProbeData } from '../lib/treeProbe';
import { pause } from '../lib/until';

export const b12FolderProject: Benchmark = {
  id: 'B12',
  name: 'b12-folder-project',
  title: 'a 5,000-file repository opened as a folder: time to the first interactive tree (cold and warm), gateway memory, vs git and a plain read of the files',
  async run(ctx): Promise<BenchReport> {
    // B12_FILES / B12_IGNORED (files in the repository / under its ignored folders), B12_REPS,
    // B12_NO_BUILD=1 (apps/web/dist as it is, however stale: an e2e run may be using it).
    const env = (name: string) => process.env[name];
    const plan = {
      files: Number(env('B12_FILES') ?? (ctx.smoke ? 150 : 5000)),
      ignoredFiles: Number(env('B12_IGNORED') ?? (ctx.smoke ? 100 : 3000)),
      repetitions: Number(env('B12_REPS') ?? (ctx.smoke ? 1 : 5)),
      largeFiles: Number(env('B12_LARGE') ?? (ctx.smoke ? 0 : 50_000)),
      clientOnly: env('B12_CLIENT') === 'only',
    };
    if (plan.clientOnly) ctx.log('B12_CLIENT=only: no browser arms, the IDE is not built');
    else if (env('B12_NO_BUILD') === '1') ctx.log('B12_NO_BUILD=1: the IDE as built in apps/web/dist, however stale');
    else ensureBuilt(ctx.log);
    const webRoot = ideWebRoot();
    if (!plan.clientOnly && !existsSync(join(webRoot, 'index.html'))) throw new Error(`${webRoot} holds no built IDE (npm run build)`);

    let started = performance.now();
    const repo = generateRepo({ files: plan.files, ignoredFiles: plan.ignoredFiles });
    const single = oneFileRepo();
    const large = plan.largeFiles > 0 ? generateRepo({ files: plan.largeFiles, ignoredFiles: plan.ignoredFiles * 4, seed: 36 }) : null;
    if (large) ctx.log(`generated ${large.root}: ${large.tracked.length} tracked files in ${large.folders} folders, ${(large.textBytes / 1e6).toFixed(1)} MB of text`);
    ctx.log(
      `generated ${repo.root}: ${repo.tracked.length} tracked files in ${repo.folders} folders, ${(repo.textBytes / 1e6).toFixed(1)} MB of text, ${repo.binaryFiles} binary; ${repo.ignoredFiles} ignored files (${((performance.now() - started) / 1000).toFixed(1)} s)`,
    );
    const { browser, context: unused } = await launchProbedBrowser();
    await unused.close();
    const runs: OpenRun[] = [];
    const floors: FloorRun[] = [];
    const clientRuns: ClientRun[] = [];
    const clientFloors: ClientFloor[] = [];
    const lsFiles = async (root: string) => (await timeCommand('git', ['ls-files'], root)).ms;
    const dataDirs: string[] = [];
    const freshDataDir = () => {
      const dir = mkdtempSync(join(tmpdir(), 'flint-bench-b12-data-'));
      dataDirs.push(dir);
      return dir;
    };
    try {
      // Not measured: tsx's compile cache, Chromium and the IDE's bundle warm, as on a laptop.
      // Smoke skips it: it proves B12 runs.
      if (!ctx.smoke && !plan.clientOnly) {
        await openOnce(browser, single, freshDataDir(), webRoot, 'one file', -1);
        ctx.progress('warm-up open (one file)');
      }
      if (!ctx.smoke) await openForClient(single, freshDataDir(), webRoot, 'one file');
      for (let rep = 0; rep < plan.repetitions; rep++) {
        const variantRoot = env('BENCH_VARIANT_ROOT');
        const clientUnits = ['client one file', 'client repository', 'client floors', ...(large ? (['client large', 'client large floors'] as const) : []), ...(variantRoot ? (['client before'] as const) : [])] as const;
        for (const unit of shuffled([...(plan.clientOnly ? [] : (['one file', 'repository', 'floors'] as const)), ...clientUnits])) {
          if (unit.startsWith('client')) {
            started = performance.now();
            if (unit === 'client one file') clientRuns.push(await openForClient(single, freshDataDir(), webRoot, 'one file'));
            else if (unit === 'client floors') clientFloors.push(await clientFloor(repo, 'repository', lsFiles));
            else if (unit === 'client large floors') clientFloors.push(await clientFloor(large!, 'large', lsFiles));
            else if (unit === 'client before') {
              const dataDir = freshDataDir();
              clientRuns.push(await openForClient(repo, dataDir, webRoot, 'before: cold', variantRoot));
              clientRuns.push(await openForClient(repo, dataDir, webRoot, 'before: warm', variantRoot));
              rmSync(dataDir, { recursive: true, force: true });
            } else {
              const target = unit === 'client large' ? large! : repo;
              const dataDir = freshDataDir();
              clientRuns.push(await openForClient(target, dataDir, webRoot, unit === 'client large' ? 'large cold' : 'cold'));
              clientRuns.push(await openForClient(target, dataDir, webRoot, unit === 'client large' ? 'large warm' : 'warm'));
              rmSync(dataDir, { recursive: true, force: true });
            }
            const last = unit.endsWith('floors') ? clientFloors.at(-1)! : clientRuns.at(-1)!;
            ctx.log(`repetition ${rep + 1}, ${unit}: ${JSON.stringify(last, (_k, v: unknown) => (typeof v === 'number' ? Math.round(v) : v))} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
            ctx.progress(unit);
            continue;
          }
          started = performance.now();
          if (unit === 'floors') floors.push(await measureFloors(repo));
          else if (unit === 'one file') runs.push(await openOnce(browser, single, freshDataDir(), webRoot, 'one file', rep));
          else {
            const dataDir = freshDataDir();
            runs.push(await openOnce(browser, repo, dataDir, webRoot, 'cold', rep));
            ctx.progress(`cold open, repetition ${rep + 1}: ${describe(runs.at(-1)!)}`);
            runs.push(await openOnce(browser, repo, dataDir, webRoot, 'warm', rep));
            runs.at(-1)!.gitStatusAfter = (await timeCommand('git', ['status', '--porcelain'], repo.root)).lines;
            rmSync(dataDir, { recursive: true, force: true });
          }
          ctx.log(`repetition ${rep + 1}, ${unit}: ${unit === 'floors' ? describeFloors(floors.at(-1)!) : describe(runs.at(-1)!)} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
        }
      }
    } finally {
      await browser.close();
      for (const dir of [repo.root, single.root, ...(large ? [large.root] : []), ...dataDirs]) rmSync(dir, { recursive: true, force: true });
    }
    const client = clientTreeReport(clientRuns, clientFloors, { repository: repo.tracked.length, large: large?.tracked.length ?? 0 });
    if (plan.clientOnly) return { tables: client.tables, targets: client.targets, data: { plan, clientRuns, clientFloors } };
    const report = folderProjectReport({ ...plan, repo: { tracked: repo.tracked.length, folders: repo.folders, textBytes: repo.textBytes, binaryFiles: repo.binaryFiles, binaryBytes: repo.binaryBytes, ignoredFiles: repo.ignoredFiles } }, runs, floors);
    return { tables: [...client.tables, ...report.tables], targets: [...client.targets, ...report.targets], data: { ...report.data, clientRuns, clientFloors } };
  },
};

function describe(run: OpenRun): string {
  return `${run.arm}: owner link after ${(run.readyMs / 1000).toFixed(2)} s (FolderSync.start ${(run.folderOpenedMs / 1000).toFixed(2)} s), tree painted after ${(run.treeMs / 1000).toFixed(2)} s, ${Number.isFinite(run.interactiveMs) ? `interactive after ${(run.interactiveMs / 1000).toFixed(2)} s` : `no quiet second within 15 s of it (${run.longFramesAfterTree} frames over 50 ms, ${(100 * run.frozenShareAfterTree).toFixed(0)}% of the time)`}, ${run.closedByGateway} sessions closed by the gateway; heap ${(run.withPage.heapUsed / 2 ** 20).toFixed(0)} MiB, ${run.withPage.docsLoaded} docs loaded`;
}

function describeFloors(floor: FloorRun): string {
  return `git ls-files ${floor.lsFilesMs.toFixed(0)} ms, git status ${floor.statusMs.toFixed(0)} ms, Node walk ${floor.walkMs.toFixed(0)} ms (${floor.walkFiles} files)`;
}

/** Opens `repo` with `dataDir`: spawn → owner link → memory → the page's complete, interactive tree → memory. */
async function openOnce(browser: Browser, repo: SyntheticRepo, dataDir: string, webRoot: string, arm: OpenArm, rep: number): Promise<OpenRun> {
  // The files the page's tree must hold (it is virtualised: its rows are those in view).
  const rows = repo.tracked.length;
  // A fresh context (no cache, no storage) per open: the link opened for the first time.
  const context = await browser.newContext({ viewport: { width: 1360, height: 820 } });
  await context.addInitScript({ content: `globalThis.__name = (f) => f; window.__benchTreeRows = ${rows}; (${installTreeProbe.toString()})();` });
  await context.addInitScript(() => {
    localStorage.setItem('flint.autocomplete', 'off');
    localStorage.setItem('flint.displayName', 'Bench user');
  });
  const page = await context.newPage();
  await page.bringToFront();
  const gateway = await FolderGateway.start({ folder: repo.root, dataDir, webRoot });
  let run: OpenRun;
  try {
    const cpuAtReady = gateway.cpuSeconds();
    const peakRssAtReady = gateway.peakRssBytes();
    if (gateway.files !== repo.tracked.length) throw new Error(`the gateway opened ${gateway.files} files; git tracks ${repo.tracked.length}`);
    // The folder sync's own footprint, before any page: the GC pause is left out of the page's
    // times, which count from the navigation that follows (the link printed + that pause).
    const atLink = { ...(await gateway.stats()).memory, docsLoaded: await gateway.metric('flint_docs_loaded') };
    const pageProfile = profiling && rep >= 0 ? await profilePage(page, `b12-page-${arm.replace(' ', '-')}-${rep + 1}`) : null;
    await pageProfile?.start();
    const closesBefore = await gateway.metric('flint_session_closes_total');
    const gotoAt = epochNow();
    await page.goto(gateway.ownerUrl, { waitUntil: 'commit' });
    type Probed = { __benchTree: TreeProbeData };
    await page.waitForFunction(() => {
      const probe = (window as unknown as Probed).__benchTree;
      return probe.interactiveAt !== null || probe.gaveUpAt !== null;
    }, null, { timeout: 240_000, polling: 100 });
    const probe = await page.evaluate(() => (window as unknown as Probed).__benchTree);
    await pageProfile?.stop();
    if (probe.fileRows !== repo.tracked.length) throw new Error(`the tree showed ${probe.fileRows} files; git tracks ${repo.tracked.length}`);
    const cpuAtTree = gateway.cpuSeconds();
    if (profiling && rep >= 0) {
      mkdirSync(profileDir, { recursive: true });
      console.log(`  CPU profile of the gateway (spawn → interactive tree): ${await gateway.profileStop(join(profileDir, `b12-gateway-${arm.replace(' ', '-')}-${rep + 1}.cpuprofile`))}`);
    }
    // The page goes on opening documents after the tree (the TypeScript worker's files): memory
    // is read once the gateway's count of loaded documents has not moved for 2 s.
    let docs = await gateway.metric('flint_docs_loaded');
    let settledAt = epochNow();
    while (epochNow() - settledAt < 2_000) {
      if (epochNow() - gotoAt > 300_000) throw new Error(`documents were still loading 300 s after the link (${docs})`);
      await pause(250);
      const now = await gateway.metric('flint_docs_loaded');
      if (now !== docs) [docs, settledAt] = [now, epochNow()];
    }
    // A page that sends more than the session's message budget is closed (4429) and reconnects.
    const closedByGateway = (await gateway.metric('flint_session_closes_total')) - closesBefore;
    const pageStatus = await page.getByTestId('status-connection').textContent();
    const withPage = { ...(await gateway.stats()).memory, docsLoaded: docs };
    await context.close();
    for (let i = 0; (await gateway.metric('flint_sessions')) > 0; i++) {
      if (i > 200) throw new Error('the page\'s session did not close');
      await pause(25);
    }
    const pageClosed = { ...(await gateway.stats()).memory, docsLoaded: await gateway.metric('flint_docs_loaded') };
    const index = probe.messages.reduce((largest, m) => (m[1] > largest[1] ? m : largest), [Number.NaN, 0]);
    // A page that never had a quiet second is slower than any that did: Infinity sorts last.
    const interactiveAt = probe.interactiveAt ?? Number.POSITIVE_INFINITY;
    // The frames watched after the tree: up to the end of the quiet second, or 15 s.
    const watchedUntil = probe.interactiveAt !== null ? probe.interactiveAt + 1000 : probe.gaveUpAt!;
    run = {
      arm,
      rep,
      readyMs: gateway.readyAt - gateway.spawnedAt,
      openedMs: gateway.openedAt - gateway.spawnedAt,
      folderOpenedMs: gateway.folderOpenedMs,
      files: gateway.files,
      cpuSecondsAtReady: cpuAtReady,
      cpuSecondsAtTree: cpuAtTree,
      socketOpenMs: probe.socketOpenAt! - gotoAt,
      indexMs: index[0] - gotoAt,
      indexBytes: index[1],
      firstRowMs: probe.firstRowAt! - gotoAt,
      pageTreeMs: probe.treeAt! - gotoAt,
      treeMs: gateway.readyAt - gateway.spawnedAt + probe.treeAt! - gotoAt,
      pageInteractiveMs: interactiveAt - gotoAt,
      interactiveMs: gateway.readyAt - gateway.spawnedAt + interactiveAt - gotoAt,
      longFramesAfterTree: probe.longFrames.length,
      longestFrameAfterTreeMs: Math.max(0, ...probe.longFrames.map(([, ms]) => ms)),
      frozenShareAfterTree: probe.longFrames.reduce((sum, [, ms]) => sum + ms, 0) / Math.max(1, watchedUntil - probe.treeAt!),
      settledMs: settledAt - gotoAt,
      closedByGateway,
      pageStatus: pageStatus ?? '',
      gotoToNavigationMs: probe.navigationAt - gotoAt,
      peakRssAtReady,
      peakRss: gateway.peakRssBytes(),
      atLink,
      withPage,
      pageClosed,
      dataBytes: 0,
      gitStatusAfter: null,
      measuredAt: epochNow(),
    };
  } finally {
    await context.close().catch(() => undefined);
    await gateway.stop();
  }
  // After the gateway closed its store (checkpointed or not: the WAL counts too).
  run.dataBytes = folderBytes(dataDir);
  return run;
}

/** The same repository read by git and by a plain Node walk, in this run. */
async function measureFloors(repo: SyntheticRepo): Promise<FloorRun> {
  const lsFiles = await timeCommand('git', ['ls-files'], repo.root);
  if (lsFiles.lines !== repo.tracked.length) throw new Error(`git ls-files listed ${lsFiles.lines} files`);
  const status = await timeCommand('git', ['status', '--porcelain'], repo.root);
  const started = performance.now();
  let files = 0;
  let bytes = 0;
  // What the generated .gitignore (and git) leave out: its node_modules/, tmp/ and *.log.
  const skipped = (name: string) => name === '.git' || name === 'node_modules' || name === 'tmp' || name.endsWith('.log');
  const walk = async (folder: string): Promise<void> => {
    for (const entry of await readdir(folder, { withFileTypes: true })) {
      if (skipped(entry.name)) continue;
      const path = join(folder, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) {
        bytes += (await readFile(path)).byteLength;
        files++;
      }
    }
  };
  await walk(repo.root);
  const walkMs = performance.now() - started;
  if (files !== repo.tracked.length) throw new Error(`the Node walk read ${files} files; git tracks ${repo.tracked.length}`);
  return { lsFilesMs: lsFiles.ms, statusMs: status.ms, statusLines: status.lines, walkMs, walkFiles: files, walkBytes: bytes };
}

/** Spawn → exit of a command, and how many lines it printed. */
function timeCommand(command: string, args: string[], cwd: string): Promise<{ ms: number; lines: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'] });
    let lines = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      for (const byte of chunk) if (byte === 10) lines++;
    });
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve({ ms: performance.now() - started, lines }) : reject(new Error(`${command} ${args.join(' ')} exited with ${code}`))));
  });
}

/** Bytes of a data folder (the SQLite file and its WAL). */
function folderBytes(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) total += statSync(join(dir, name)).size;
  return total;
}
