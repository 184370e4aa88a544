/**
 * B12's client arms (issue 36): spawn → a client holds the whole tree, without a browser. The
 * gateway is `npm start -- <folder>`'s (bench/lib/FolderGateway.ts); the client is a real
 * FlintClient over a real WebSocket that connects as soon as the owner link is printed and counts
 * the file entries of the index it synced. Arms: a one-file folder, the repository cold (fresh
 * data folder) and warm (the same data folder again), and a large repository (50,000 files by
 * default in the full run) cold — interleaved in random order with the floors (a Node walk
 * reading every file, `git ls-files`) on each repository, in one run.
 */
import { readdirSync, statSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { INDEX_ENTRIES_KEY, type IndexEntry } from '@flint/protocol';
import type { TargetCheck } from './Benchmark';
import { connectFlintClient } from './connectFlintClient';
import { epochNow, FolderGateway } from './FolderGateway';
import { percentile } from './percentile';
import type { Table } from './printTable';
import type { SyntheticRepo } from './syntheticRepo';
import { until } from './until';

export type ClientArm = 'one file' | 'cold' | 'warm' | 'large cold' | 'large warm' | 'before: cold' | 'before: warm';

export interface ClientRun {
  arm: ClientArm;
  files: number;
  /** Spawn → the owner link printed. */
  readyMs: number;
  /** main.ts's own figure for FolderSync.start. */
  folderOpenedMs: number;
  /** Spawn → a client connected after the link holds an index with every file. */
  treeMs: number;
  /** RSS after a full GC with the client connected, and the peak (VmHWM). */
  rss: number;
  peakRss: number;
  heapUsed: number;
  docsLoaded: number;
  /** The data folder after the gateway stopped (SQLite and its WAL). */
  dataBytes: number;
}

export interface ClientFloor {
  repo: 'repository' | 'large';
  walkMs: number;
  walkFiles: number;
  lsFilesMs: number;
}

/** Opens `repo` with `dataDir`, connects a client as soon as the link is printed, waits for every file in its index. */
export async function openForClient(repo: SyntheticRepo, dataDir: string, webRoot: string, arm: ClientArm, root?: string): Promise<ClientRun> {
  const gateway = await FolderGateway.start({ folder: repo.root, dataDir, webRoot, readyTimeoutMs: 600_000, root });
  try {
    const url = new URL(gateway.ownerUrl);
    const workspaceId = url.pathname.split('/').at(-1)!;
    const token = new URLSearchParams(url.hash.slice(1)).get('token')!;
    const client = await connectFlintClient(`${url.protocol === 'https:' ? 'wss' : 'ws'}://${url.host}/ws`, workspaceId, token);
    const entries = client.index.doc.getMap<IndexEntry>(INDEX_ENTRIES_KEY);
    const files = () => {
      let count = 0;
      for (const entry of entries.values()) if (entry.kind === 'file') count++;
      return count;
    };
    await until(() => files() >= repo.tracked.length, `the client's index to hold ${repo.tracked.length} files`, 600_000);
    const treeMs = epochNow() - gateway.spawnedAt;
    const count = files();
    const stats = await gateway.stats();
    const run: ClientRun = {
      arm,
      files: count,
      readyMs: gateway.readyAt - gateway.spawnedAt,
      folderOpenedMs: gateway.folderOpenedMs,
      treeMs,
      rss: stats.memory.rss,
      heapUsed: stats.memory.heapUsed,
      peakRss: gateway.peakRssBytes(),
      docsLoaded: await gateway.metric('flint_docs_loaded'),
      dataBytes: 0,
    };
    client.destroy();
    await gateway.stop();
    run.dataBytes = folderBytes(dataDir);
    return run;
  } finally {
    await gateway.stop();
  }
}

/** `git ls-files` and a Node walk reading every tracked file, on `repo`, now. */
export async function clientFloor(repo: SyntheticRepo, which: ClientFloor['repo'], lsFiles: (root: string) => Promise<number>): Promise<ClientFloor> {
  const lsFilesMs = await lsFiles(repo.root);
  const started = performance.now();
  let files = 0;
  const skipped = (name: string) => name === '.git' || name === 'node_modules' || name === 'tmp' || name.endsWith('.log');
  const walk = async (folder: string): Promise<void> => {
    for (const entry of await readdir(folder, { withFileTypes: true })) {
      if (skipped(entry.name)) continue;
      const path = join(folder, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) {
        await readFile(path);
        files++;
      }
    }
  };
  await walk(repo.root);
  return { repo: which, walkMs: performance.now() - started, walkFiles: files, lsFilesMs };
}

function folderBytes(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) total += statSync(join(dir, name)).size;
  return total;
}

export function clientTreeReport(runs: ClientRun[], floors: ClientFloor[], files: { repository: number; large: number }): { tables: Table[]; targets: TargetCheck[] } {
  const p = (arm: ClientArm, pick: (r: ClientRun) => number, q = 50) => {
    const values = runs.filter((r) => r.arm === arm).map(pick);
    return values.length ? percentile(values, q) : Number.NaN;
  };
  const f = (repo: ClientFloor['repo'], pick: (r: ClientFloor) => number, q = 50) => {
    const values = floors.filter((r) => r.repo === repo).map(pick);
    return values.length ? percentile(values, q) : Number.NaN;
  };
  const mib = (bytes: number) => bytes / 2 ** 20;
  const arms: ClientArm[] = ['one file', 'before: cold', 'before: warm', 'cold', 'warm', 'large cold', 'large warm'];
  const present = arms.filter((arm) => runs.some((r) => r.arm === arm));
  const floorOf = (arm: ClientArm) => (arm.startsWith('large') ? 'large' : 'repository');
  // BENCH_VARIANT_ROOT's arms: the code before the change (bench/makeVariant.ts), in the same run.
  const table: Table = {
    title: `B12 spawn → a client holds the whole tree (ms; p50 / p90; no browser)`,
    columns: ['arm', 'files', 'runs', 'owner link p50', 'FolderSync.start p50', 'tree p50', 'tree p90', 'tree − one file', 'tree ÷ Node walk', 'RSS MiB (GC\'d)', 'peak RSS MiB', 'docs loaded', 'data folder MiB'],
    rows: present.map((arm) => [
      arm,
      p(arm, (r) => r.files),
      runs.filter((r) => r.arm === arm).length,
      p(arm, (r) => r.readyMs),
      p(arm, (r) => r.folderOpenedMs),
      p(arm, (r) => r.treeMs),
      p(arm, (r) => r.treeMs, 90),
      arm === 'one file' ? null : p(arm, (r) => r.treeMs) - p('one file', (r) => r.treeMs),
      arm === 'one file' ? null : p(arm, (r) => r.treeMs) / f(floorOf(arm), (r) => r.walkMs),
      mib(p(arm, (r) => r.rss)),
      mib(p(arm, (r) => r.peakRss)),
      p(arm, (r) => r.docsLoaded),
      mib(p(arm, (r) => r.dataBytes)),
    ]),
    notes: [
      '"before:" arms run main.ts from BENCH_VARIANT_ROOT (the code before the change, bench/makeVariant.ts) on the same repository, interleaved with the others. Each arm spawns main.ts on the folder with a data folder (fresh for cold; the cold one again for warm); a FlintClient connects when the owner link is printed; "tree" is spawn → its index holds every file. Floors below, in the same run, interleaved.',
    ],
  };
  const floorTable: Table = {
    title: 'B12 client arms\' floors (ms; p50 / p90)',
    columns: ['repository', 'files', 'git ls-files p50', 'p90', 'Node walk reading every file p50', 'p90'],
    rows: (['repository', 'large'] as const)
      .filter((repo) => floors.some((r) => r.repo === repo))
      .map((repo) => [repo, f(repo, (r) => r.walkFiles), f(repo, (r) => r.lsFilesMs), f(repo, (r) => r.lsFilesMs, 90), f(repo, (r) => r.walkMs), f(repo, (r) => r.walkMs, 90)]),
  };
  const extra = p('cold', (r) => r.treeMs) - p('one file', (r) => r.treeMs);
  const walkRatio = p('cold', (r) => r.treeMs) / f('repository', (r) => r.walkMs);
  const targets: TargetCheck[] = [
    { name: `spawn → client holds the tree, ${files.repository} files cold, over the one-file folder (p50)`, target: '≤ 1 s more', actual: `${(extra / 1000).toFixed(2)} s more`, met: extra <= 1000 },
    { name: `the same ÷ a Node walk reading every file`, target: '≤ 3 ×', actual: `${walkRatio.toFixed(1)} ×`, met: walkRatio <= 3 },
  ];
  if (present.includes('large cold')) {
    const large = p('large cold', (r) => r.treeMs);
    const rssRatio = p('large cold', (r) => r.rss) / p('one file', (r) => r.rss);
    targets.push(
      { name: `${files.large} files cold: spawn → client holds the tree (p50)`, target: '≤ 10 s', actual: `${(large / 1000).toFixed(2)} s`, met: large <= 10_000 },
      { name: `${files.large} files cold: RSS ÷ the one-file folder's`, target: '≤ 2 ×', actual: `${rssRatio.toFixed(2)} ×`, met: rssRatio <= 2 },
    );
  }
  return { tables: [table, floorTable], targets };
}
