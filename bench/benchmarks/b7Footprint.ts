/**
 * B7 — footprint: memory of an idle room and of an idle session (gateway in its own process,
 * heap and RSS after a full GC, over N rooms and sessions) next to the reference Yjs server's
 * per-document and per-connection memory; the web bundle (gzip sizes of what the first load
 * needs and of what loads lazily); and cold start of `npm start`'s gateway to its first
 * /healthz, next to a bare Node HTTP server (the floor) and the reference Yjs server.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebsocketProvider } from 'y-websocket';
import { WebSocket } from 'ws';
import * as Y from 'yjs';
import type { Benchmark, BenchReport, TargetCheck } from '../lib/Benchmark';
import { ChildHost, type ProcessStats } from '../lib/ChildHost';
import { LightClient } from '../lib/LightClient';
import { measureBundle, type BundleSizes } from '../lib/measureBundle';
import { measureColdStart } from '../lib/measureColdStart';
import { median } from '../lib/percentile';
import type { Table } from '../lib/printTable';
import { tokenText } from '../lib/PacedTokenServer';
import { pause, until } from '../lib/until';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const fileText = tokenText(500).join('');
const files = { 'src/tally.ts': fileText, 'src/format.ts': fileText, 'README.md': fileText };
const kib = (bytes: number) => bytes / 1024;

export const b7Footprint: Benchmark = {
  id: 'B7',
  name: 'b7-footprint',
  title: 'footprint: idle room and session memory, bundle size, cold start',
  async run(ctx): Promise<BenchReport> {
    const n = ctx.smoke ? 20 : 200;
    ctx.log(`memory over ${n} rooms / sessions`);
    const flint = await flintMemory(n);
    const yjs = await yjsMemory(n);
    const memoryTable: Table = {
      title: `B7 memory per unit (KiB, after full GC, over ${n})`,
      columns: ['server', 'what', 'heapUsed KiB', 'RSS KiB'],
      rows: [
        ['Flint gateway', 'room + first session (index + 1 file of 2 KB open)', kib(flint.roomAndSession.heap), kib(flint.roomAndSession.rss)],
        ['Flint gateway', 'each further session on that file', kib(flint.session.heap), kib(flint.session.rss)],
        ['Flint gateway', 'idle room, no sessions (before unload)', kib(flint.idleRoom.heap), kib(flint.idleRoom.rss)],
        ['Flint gateway', 'after idle unload (should be ~0)', kib(flint.afterUnload.heap), kib(flint.afterUnload.rss)],
        ['reference Yjs server', 'doc + first connection (2 KB text)', kib(yjs.docAndConnection.heap), kib(yjs.docAndConnection.rss)],
        ['reference Yjs server', 'each further connection', kib(yjs.connection.heap), kib(yjs.connection.rss)],
      ],
      notes: ['Δ of process.memoryUsage() in the server\'s own process ÷ N; RSS moves in pages and with the allocator, heapUsed is the sharper number.'],
    };

    let bundle: BundleSizes | null = null;
    const dist = join(root, 'apps', 'web', 'dist');
    if (!ctx.smoke) {
      ctx.log('npm run build');
      const build = spawnSync('npm', ['run', 'build'], { cwd: root, encoding: 'utf8' });
      if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stdout}\n${build.stderr}`);
    }
    if (existsSync(join(dist, 'index.html'))) bundle = measureBundle(dist);
    else ctx.log('apps/web/dist is not built: bundle sizes skipped (run `npm run build`)');

    const runs = ctx.smoke ? 1 : 5;
    ctx.log(`cold start, ${runs} runs per server, interleaved`);
    const cold = await coldStarts(runs);
    const tables: Table[] = [memoryTable];
    if (bundle) {
      tables.push({
        title: 'B7 web bundle (apps/web/dist)',
        columns: ['part', 'files', 'raw KiB', 'gzip KiB'],
        rows: [
          ['first load: index.html + entry script, its CSS and static imports', bundle.initial.length, kib(bundle.initialTotal.bytes), kib(bundle.initialTotal.gzipBytes)],
          ...bundle.lazyGroups.map((g) => [`lazy: ${g.group}`, g.files, kib(g.bytes), kib(g.gzipBytes)]),
          ['lazy, all', bundle.lazy.length, kib(bundle.lazyTotal.bytes), kib(bundle.lazyTotal.gzipBytes)],
          ...bundle.lazy.slice(0, 6).map((f) => [`  largest: ${f.file}`, 1, kib(f.bytes), kib(f.gzipBytes)]),
        ],
        notes: ['gzip -9 per file; "first load" follows static imports from the entry; everything else is fetched on demand.'],
      });
    }
    tables.push({
      title: `B7 cold start to first HTTP 200 (ms, median of ${runs}, interleaved)`,
      columns: ['server', 'median', 'min', 'max', 'vs bare node'],
      rows: cold.map((c) => [c.server, median(c.ms), Math.min(...c.ms), Math.max(...c.ms), median(c.ms) / median(cold[0]!.ms)]),
      notes: ['Flint: `node --import tsx apps/gateway/src/main.ts` with a fresh FLINT_DATA_DIR (seeds the demo workspace), polled on /healthz every 5 ms.'],
    });
    const targets: TargetCheck[] = [
      { name: 'idle room (no sessions) memory', target: 'reported (no target set)', actual: `${kib(flint.idleRoom.heap).toFixed(0)} KiB heap`, met: null },
      { name: 'idle session memory', target: 'reported (no target set)', actual: `${kib(flint.session.heap).toFixed(0)} KiB heap`, met: null },
    ];
    if (bundle) targets.push({ name: 'first-load bundle (gzip)', target: 'reported (no target set)', actual: `${kib(bundle.initialTotal.gzipBytes).toFixed(0)} KiB`, met: null });
    targets.push({ name: 'gateway cold start', target: 'reported (no target set)', actual: `${median(cold[1]!.ms).toFixed(0)} ms`, met: null });
    return { tables, targets, data: { n, flint, yjs, bundle, coldStart: cold } };
  },
};

interface Delta {
  heap: number;
  rss: number;
}

const per = (a: ProcessStats, b: ProcessStats, count: number): Delta => ({
  heap: (b.memory.heapUsed - a.memory.heapUsed) / count,
  rss: (b.memory.rss - a.memory.rss) / count,
});

async function flintMemory(n: number) {
  const dataDir = mkdtempSync(join(tmpdir(), 'flint-bench-b7-'));
  const idleUnloadMs = 3_000;
  const gateway = await ChildHost.start('gateway', { storeFile: join(dataDir, 'flint.sqlite'), config: { idleUnloadMs } });
  try {
    const workspaces = await gateway.call<Array<{ workspaceId: string; token: string }>>('createWorkspaces', { count: n, files });
    // Creating a workspace loads its room; wait for the idle unload so the baseline holds none.
    await waitForRooms(gateway, 0);
    const base = await gateway.stats(true);
    const connectAll = async () => {
      const clients: LightClient[] = [];
      for (let i = 0; i < n; i += 25) {
        clients.push(
          ...(await Promise.all(
            workspaces.slice(i, i + 25).map(async ({ workspaceId, token }) => {
              const client = await LightClient.connect(gateway.url, workspaceId, token);
              await client.sync(client.fileId('src/tally.ts'));
              return client;
            }),
          )),
        );
      }
      return clients;
    };
    const first = await connectAll();
    const withSessions = await gateway.stats(true);
    const second = await connectAll();
    const withTwo = await gateway.stats(true);
    for (const client of [...first, ...second]) client.close();
    for (let i = 0; (await gateway.call<number>('sessionCount')) > 0; i++) {
      if (i > 500) throw new Error('sessions did not close');
      await pause(5);
    }
    const idle = await gateway.stats(true);
    if (Number(await gateway.call('roomsLoaded')) !== n) throw new Error('rooms unloaded before the idle-room measurement; raise idleUnloadMs');
    await waitForRooms(gateway, 0);
    const unloaded = await gateway.stats(true);
    return {
      roomAndSession: per(base, withSessions, n),
      session: per(withSessions, withTwo, n),
      idleRoom: per(base, idle, n),
      afterUnload: per(base, unloaded, n),
    };
  } finally {
    await gateway.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
async function waitForRooms(gateway: ChildHost, count: number): Promise<void> {
  for (let i = 0; Number(await gateway.call('roomsLoaded')) !== count; i++) {
    if (i > 200) throw new Error(`rooms loaded did not reach ${count}`);
    await pause(50);
  }
}

async function yjsMemory(n: number) {
  const yjs = await ChildHost.start('yjs');
  const options = { WebSocketPolyfill: WebSocket as unknown as typeof globalThis.WebSocket, disableBc: true };
  const providers: WebsocketProvider[] = [];
  // Each y-websocket provider adds a process 'exit' listener in Node; 2N of them are expected here.
  const maxListeners = process.getMaxListeners();
  process.setMaxListeners(maxListeners + 2 * n + 10);
  try {
    const base = await yjs.stats(true);
    const connect = async (seed: boolean) => {
      for (let i = 0; i < n; i += 25) {
        const batch = Array.from({ length: Math.min(25, n - i) }, (_, j) => {
          const doc = new Y.Doc();
          const provider = new WebsocketProvider(yjs.url, `doc-${i + j}`, doc, options);
          providers.push(provider);
          return { doc, provider };
        });
        await until(() => batch.every((b) => b.provider.synced), 'y-websocket providers to sync', 20_000);
        if (seed) for (const { doc } of batch) doc.getText('content').insert(0, fileText);
        await until(() => batch.every((b) => b.doc.getText('content').length === fileText.length), 'docs to hold the text', 20_000);
      }
    };
    await connect(true);
    // Let the seeds reach the server before measuring.
    await pause(300);
    const withDocs = await yjs.stats(true);
    await connect(false);
    const withTwo = await yjs.stats(true);
    return { docAndConnection: per(base, withDocs, n), connection: per(withDocs, withTwo, n) };
  } finally {
    for (const provider of providers) provider.destroy();
    process.setMaxListeners(maxListeners);
    await yjs.stop();
  }
}

async function coldStarts(runs: number): Promise<Array<{ server: string; ms: number[] }>> {
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' };
  const arms = [
    { server: 'bare node http server (floor)', command: process.execPath, args: ['-e', "require('http').createServer((q,s)=>s.end('ok')).listen(+process.env.PORT,'127.0.0.1')"], path: '/', env: () => env },
    {
      server: 'Flint gateway (node --import tsx main.ts)',
      command: process.execPath,
      args: ['--import', 'tsx', 'apps/gateway/src/main.ts'],
      path: '/healthz',
      env: () => ({ ...env, FLINT_HOST: '127.0.0.1', FLINT_DATA_DIR: mkdtempSync(join(tmpdir(), 'flint-bench-cold-')) }),
    },
    { server: 'reference Yjs server (y-websocket bin)', command: process.execPath, args: ['node_modules/@y/websocket-server/src/server.js'], path: '/', env: () => ({ ...env, HOST: '127.0.0.1' }) },
  ];
  const out = arms.map((arm) => ({ server: arm.server, ms: [] as number[] }));
  for (let run = 0; run < runs; run++) {
    for (const [i, arm] of arms.entries()) {
      const armEnv: Record<string, string> = arm.env();
      out[i]!.ms.push(await measureColdStart(arm.command, arm.args, armEnv, arm.path, root));
      if (armEnv.FLINT_DATA_DIR) rmSync(armEnv.FLINT_DATA_DIR, { recursive: true, force: true });
    }
  }
  return out;
}
