/**
 * B12's tables and targets (bench/benchmarks/b12FolderProject.ts): time to the first interactive
 * tree per arm and where it goes, the floors (git, a plain Node read of the files) and the ratios
 * to them, and the gateway's memory after the open.
 */
import type { BenchReport, TargetCheck } from './Benchmark';
import { percentile } from './percentile';
import type { Table } from './printTable';

export type OpenArm = 'cold' | 'warm' | 'one file';

export interface MemoryAt extends NodeJS.MemoryUsage {
  /** `flint_docs_loaded`: documents in memory, the index included. */
  docsLoaded: number;
}

/**
 * One open of a folder, in ms from the gateway's spawn, or in the page from the navigation to the
 * owner link (started once the link was printed and the gateway's memory read: that GC pause is
 * left out of every time, spawn → … included).
 */
export interface OpenRun {
  arm: OpenArm;
  rep: number;
  /** Spawn → the owner link printed. */
  readyMs: number;
  /** Spawn → the `"folder opened"` log line. */
  openedMs: number;
  /** main.ts's own figure: FolderSync.start (reconcile disk and workspace). */
  folderOpenedMs: number;
  files: number;
  cpuSecondsAtReady: number;
  cpuSecondsAtTree: number;
  /** The page's times count from `page.goto` (right after the link, and the memory read at it). */
  gotoToNavigationMs: number;
  socketOpenMs: number;
  /** Link → the largest WebSocket message (the index) arrived. */
  indexMs: number;
  indexBytes: number;
  firstRowMs: number;
  pageTreeMs: number;
  /** Spawn → the start of the first frame that painted every row. */
  treeMs: number;
  /**
   * Link → / spawn → the tree painted and the page free: the end of the last frame over 50 ms
   * before a quiet second; Infinity when no quiet second came within 15 s of the tree.
   */
  pageInteractiveMs: number;
  interactiveMs: number;
  /** Frames over 50 ms after the tree was painted, until the quiet second (or 15 s). */
  longFramesAfterTree: number;
  longestFrameAfterTreeMs: number;
  /** Their share of the time from the tree to the end of the quiet second (or 15 s): how much of it the page could not answer a click. */
  frozenShareAfterTree: number;
  /** Link → the gateway's count of loaded documents last moved (the page opening the TypeScript worker's files). */
  settledMs: number;
  /** Sessions the gateway closed (flint_session_closes_total, any code) from the navigation until docs settled. */
  closedByGateway: number;
  /** The page's connection status then (its status bar). */
  pageStatus: string;
  peakRssAtReady: number;
  peakRss: number;
  /** Before any page: the folder sync's own footprint. */
  atLink: MemoryAt;
  withPage: MemoryAt;
  pageClosed: MemoryAt;
  dataBytes: number;
  /** Lines of `git status --porcelain` after the cold and warm opens (0: Flint left the files alone). */
  gitStatusAfter: number | null;
  measuredAt: number;
}

export interface FloorRun {
  lsFilesMs: number;
  statusMs: number;
  statusLines: number;
  walkMs: number;
  walkFiles: number;
  walkBytes: number;
}

export interface FolderPlan {
  files: number;
  ignoredFiles: number;
  repetitions: number;
  repo: { tracked: number; folders: number; textBytes: number; binaryFiles: number; binaryBytes: number; ignoredFiles: number };
}

const mib = (bytes: number) => bytes / 2 ** 20;
/** A time (or ratio) of the interactive tree: Infinity when no quiet second came within 15 s of the tree. */
const orNever = (value: number) => (Number.isFinite(value) ? value : 'none within 15 s');
const arms: OpenArm[] = ['cold', 'warm', 'one file'];

export function folderProjectReport(plan: FolderPlan, runs: OpenRun[], floors: FloorRun[]): BenchReport {
  const of = (arm: OpenArm) => runs.filter((r) => r.arm === arm);
  const p = (arm: OpenArm, pick: (r: OpenRun) => number, q = 50) => percentile(of(arm).map(pick), q);
  const f = (pick: (r: FloorRun) => number, q = 50) => percentile(floors.map(pick), q);
  const n = plan.repetitions;
  const repo = plan.repo;
  const oneFileInteractive = p('one file', (r) => r.interactiveMs);
  const label = (arm: OpenArm) => (arm === 'one file' ? 'one file (control)' : `${arm} (${repo.tracked.toLocaleString('en-US')} files)`);

  const summary: Table = {
    title: `B12 time to the first interactive tree (ms; p50 / p90 of ${n}, arms interleaved)`,
    columns: ['arm', 'spawn → interactive tree p50', 'p90', 'interactive within 15 s of the tree', 'spawn → tree painted p50', 'gateway ready (link printed) p50', 'p90', 'of which FolderSync.start p50', 'page: link → interactive p50', 'p90', 'interactive × one file'],
    rows: arms.map((arm) => [
      label(arm),
      orNever(p(arm, (r) => r.interactiveMs)),
      orNever(p(arm, (r) => r.interactiveMs, 90)),
      `${of(arm).filter((r) => Number.isFinite(r.interactiveMs)).length} of ${of(arm).length}`,
      p(arm, (r) => r.treeMs),
      p(arm, (r) => r.readyMs),
      p(arm, (r) => r.readyMs, 90),
      p(arm, (r) => r.folderOpenedMs),
      orNever(p(arm, (r) => r.pageInteractiveMs)),
      orNever(p(arm, (r) => r.pageInteractiveMs, 90)),
      orNever(p(arm, (r) => r.interactiveMs) / oneFileInteractive),
    ]),
    notes: [
      `The repository: ${repo.tracked.toLocaleString('en-US')} tracked files in ${repo.folders} folders (${mib(repo.textBytes).toFixed(1)} MiB of text, ${repo.binaryFiles} binary files of ${mib(repo.binaryBytes).toFixed(2)} MiB), committed; its .gitignore keeps ${repo.ignoredFiles.toLocaleString('en-US')} more files (node_modules/, tmp/, *.log) out.`,
      'spawn: `node --import tsx apps/gateway/src/main.ts --port 0 <folder>` (as scripts/start.mjs runs it). tree painted: the start of the first animation frame in which the owner link\'s page had a tree row for every file and folder (a workspace opens with every folder expanded; the tree is not virtualised). interactive tree: that, and the page free to answer a click: the end of the last frame over 50 ms (rAF interval) before the first second without one after the tree was painted (Lighthouse\'s time to interactive, with a 1 s window); "none within 15 s": no such second came in the 15 s after the tree (percentiles count it as slower than any run that had one).',
      'gateway ready: spawn → the owner link printed; main.ts opens the folder before it listens. FolderSync.start: main.ts\'s own `"folder opened"` ms. cold: a fresh data folder (every file imported); warm: the second open with the same data folder (reconciled against the store); one file: a committed folder holding one README, fresh data folder.',
    ],
  };

  const phases: Table = {
    title: 'B12 where the time goes (ms from the gateway\'s spawn, then from its owner link; p50)',
    columns: ['arm', 'spawn → "folder opened"', 'of which FolderSync.start', '"folder opened" → link', 'link → index received', 'index bytes', 'link → first row painted', 'link → every row painted', 'link → interactive', 'long frames after the tree', 'longest', 'share of the time frozen', 'link → docs settled', 'sessions closed by the gateway (max)', 'gateway CPU s spawn → link', 'CPU s link → interactive'],
    rows: arms.map((arm) => [
      label(arm),
      p(arm, (r) => r.openedMs),
      p(arm, (r) => r.folderOpenedMs),
      p(arm, (r) => r.readyMs - r.openedMs),
      p(arm, (r) => r.indexMs),
      p(arm, (r) => r.indexBytes),
      p(arm, (r) => r.firstRowMs),
      p(arm, (r) => r.pageTreeMs),
      orNever(p(arm, (r) => r.pageInteractiveMs)),
      p(arm, (r) => r.longFramesAfterTree),
      p(arm, (r) => r.longestFrameAfterTreeMs),
      `${(100 * p(arm, (r) => r.frozenShareAfterTree)).toFixed(0)}%`,
      p(arm, (r) => r.settledMs),
      p(arm, (r) => r.closedByGateway, 100),
      p(arm, (r) => r.cpuSecondsAtReady),
      p(arm, (r) => r.cpuSecondsAtTree - r.cpuSecondsAtReady),
    ]),
    notes: [
      'index received: the largest WebSocket message the page got before the tree was complete (the index doc\'s sync), timed when it reached the page\'s JavaScript. The page navigates as soon as the link is printed, in a fresh browser context (nothing cached). long frames: frames (rAF intervals) over 50 ms after the tree was painted, until the quiet second (or 15 s); share frozen: their total ÷ the time from the tree to the end of the quiet second (or the 15 s).',
      'docs settled: the gateway\'s flint_docs_loaded last moved (polled every 250 ms until still for 2 s): the page opens every code file for its TypeScript worker after the tree (apps/web/src/editor/ModelRegistry.ts, reconcile). sessions closed: flint_session_closes_total from the navigation until then — a page that sends more messages than a session may (limits.maxMessagesPerSecond) is closed with 4429 and reconnects.',
      'CPU: user + system seconds of the gateway process (/proc/<pid>/stat).',
    ],
  };

  const ratio = (arm: OpenArm, pick: (r: OpenRun) => number, q: number) => p(arm, pick, q) / f((r) => r.walkMs, q);
  const floorTable: Table = {
    title: `B12 floors: the same repository, the same run (ms; p50 / p90 of ${floors.length})`,
    columns: ['what', 'p50', 'p90', 'note'],
    rows: [
      ['git ls-files', f((r) => r.lsFilesMs), f((r) => r.lsFilesMs, 90), `${repo.tracked} files (spawn → exit)`],
      ['git status --porcelain', f((r) => r.statusMs), f((r) => r.statusMs, 90), `${f((r) => r.statusLines, 100)} lines at most (spawn → exit)`],
      ['Node walk reading every tracked file', f((r) => r.walkMs), f((r) => r.walkMs, 90), `fs.promises readdir + readFile, one at a time, in the runner: ${f((r) => r.walkFiles)} files, ${mib(f((r) => r.walkBytes)).toFixed(1)} MiB`],
      ['cold FolderSync.start ÷ Node walk', ratio('cold', (r) => r.folderOpenedMs, 50), ratio('cold', (r) => r.folderOpenedMs, 90), '"Flint open ÷ reading the files"'],
      ['warm FolderSync.start ÷ Node walk', ratio('warm', (r) => r.folderOpenedMs, 50), ratio('warm', (r) => r.folderOpenedMs, 90), ''],
      ['cold spawn → tree painted ÷ Node walk', ratio('cold', (r) => r.treeMs, 50), ratio('cold', (r) => r.treeMs, 90), ''],
      ['warm spawn → tree painted ÷ Node walk', ratio('warm', (r) => r.treeMs, 50), ratio('warm', (r) => r.treeMs, 90), ''],
      ['cold spawn → interactive tree ÷ Node walk', orNever(ratio('cold', (r) => r.interactiveMs, 50)), orNever(ratio('cold', (r) => r.interactiveMs, 90)), ''],
      ['warm spawn → interactive tree ÷ Node walk', orNever(ratio('warm', (r) => r.interactiveMs, 50)), orNever(ratio('warm', (r) => r.interactiveMs, 90)), ''],
      ['cold FolderSync.start ÷ git status', p('cold', (r) => r.folderOpenedMs) / f((r) => r.statusMs), p('cold', (r) => r.folderOpenedMs, 90) / f((r) => r.statusMs, 90), 'git status also reads every file\'s metadata (not its bytes: its index has them)'],
    ],
    notes: ['Ratios divide the percentiles (p50 by p50, p90 by p90). The files are in the page cache for every arm: the repository was just written and is read in every repetition.'],
  };

  const heapOverFloor = (arm: OpenArm, at: (r: OpenRun) => MemoryAt) => (p(arm, (r) => at(r).heapUsed) - p('one file', (r) => at(r).heapUsed)) / repo.textBytes;
  const memory: Table = {
    title: 'B12 gateway memory (MiB, after a full GC; p50)',
    columns: ['arm', 'heapUsed at link (no page yet)', 'RSS', 'docs loaded', 'heapUsed, page open, docs settled', 'RSS', 'docs loaded', 'heapUsed, page left', 'RSS', 'docs loaded', 'peak RSS', 'heap over one file ÷ text: at link / page left', 'data folder'],
    rows: arms.map((arm) => [
      label(arm),
      mib(p(arm, (r) => r.atLink.heapUsed)),
      mib(p(arm, (r) => r.atLink.rss)),
      p(arm, (r) => r.atLink.docsLoaded),
      mib(p(arm, (r) => r.withPage.heapUsed)),
      mib(p(arm, (r) => r.withPage.rss)),
      p(arm, (r) => r.withPage.docsLoaded),
      mib(p(arm, (r) => r.pageClosed.heapUsed)),
      mib(p(arm, (r) => r.pageClosed.rss)),
      p(arm, (r) => r.pageClosed.docsLoaded),
      mib(p(arm, (r) => r.peakRss)),
      arm === 'one file' ? null : `${heapOverFloor(arm, (r) => r.atLink).toFixed(2)} / ${heapOverFloor(arm, (r) => r.pageClosed).toFixed(2)}`,
      mib(p(arm, (r) => r.dataBytes)),
    ]),
    notes: [
      `process.memoryUsage() in the gateway after two gc() calls (bench/lib/folderGatewayProbe.ts, preloaded): at the link, before any page; with the page open once the documents it opens settled (README.md, its default file, and every code file, for its TypeScript worker); after it left. peak RSS: VmHWM over the whole open. "heap over one file ÷ text": (heapUsed − the one-file control's) ÷ the ${mib(repo.textBytes).toFixed(1)} MiB of text; 1 would be the text held once as one-byte strings. docs loaded: flint_docs_loaded (/metrics), the index included. data folder: the SQLite file and its WAL after the gateway stopped.`,
    ],
  };

  const seconds = (ms: number) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(2)} s` : `none within 15 s of the tree (painted after ${(p('cold', (r) => r.treeMs) / 1000).toFixed(2)} s cold, ${(p('warm', (r) => r.treeMs) / 1000).toFixed(2)} s warm)`);
  const coldTree = p('cold', (r) => r.interactiveMs);
  const warmTree = p('warm', (r) => r.interactiveMs);
  const docsLeft = Math.max(...runs.filter((r) => r.arm !== 'one file').map((r) => r.pageClosed.docsLoaded));
  const closes = Math.max(...runs.filter((r) => r.arm !== 'one file').map((r) => r.closedByGateway));
  const statusAfter = Math.max(...runs.filter((r) => r.gitStatusAfter !== null).map((r) => r.gitStatusAfter!));
  const targets: TargetCheck[] = [
    { name: `cold: spawn → first interactive tree, ${repo.tracked} files, p50`, target: '≤ 3 s', actual: seconds(coldTree), met: coldTree <= 3000 },
    { name: `warm: spawn → first interactive tree, ${repo.tracked} files, p50`, target: '≤ 3 s', actual: seconds(warmTree), met: warmTree <= 3000 },
    { name: 'gateway heap over the one-file control after a cold open, page left', target: '≤ 2 × the text (not far beyond it)', actual: `${heapOverFloor('cold', (r) => r.pageClosed).toFixed(2)} × ${mib(repo.textBytes).toFixed(1)} MiB (at the link: ${heapOverFloor('cold', (r) => r.atLink).toFixed(2)} ×)`, met: heapOverFloor('cold', (r) => r.pageClosed) <= 2 },
    { name: 'docs loaded once the page left (cold and warm)', target: '1: the index only (the sync frees what it read)', actual: `${docsLeft} at most`, met: docsLeft <= 1 },
    { name: 'the page stays connected while it opens the workspace (cold and warm)', target: 'no session closed by the gateway', actual: `${closes} closed at most (${[...new Set(runs.filter((r) => r.arm !== 'one file').map((r) => r.pageStatus))].join(' / ')} at the end)`, met: closes === 0 },
    { name: 'git status --porcelain after a cold and a warm open', target: '0 lines: no file rewritten', actual: `${statusAfter} lines at most`, met: statusAfter === 0 },
  ];
  return { tables: [summary, phases, floorTable, memory], targets, data: { plan, runs, floors } };
}
