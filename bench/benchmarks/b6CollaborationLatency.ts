/**
 * B6 — collaboration latency: a keystroke in client A until the text is visible in client B,
 * through Flint (gateway + FlintClient, SQLite WAL file store as in production) and through the
 * reference Yjs server (@y/websocket-server + y-websocket providers, no persistence), in the
 * same run, keystrokes alternating between the two in random order. Node clients; both servers
 * run in their own processes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FILE_TEXT_KEY } from '@flint/protocol';
import { WebsocketProvider } from 'y-websocket';
import { WebSocket } from 'ws';
import * as Y from 'yjs';
import type { Benchmark, BenchReport } from '../lib/Benchmark';
import { ChildHost } from '../lib/ChildHost';
import { connectFlintClient, fileIdOf } from '../lib/connectFlintClient';
import { tokenText } from '../lib/PacedTokenServer';
import { summarize } from '../lib/percentile';
import { pause, until } from '../lib/until';

interface Pair {
  name: string;
  a: Y.Text;
  b: Y.Text;
  samples: number[];
  close(): void;
}

const seedText = tokenText(500).join('');

export const b6CollaborationLatency: Benchmark = {
  id: 'B6',
  name: 'b6-collaboration-latency',
  title: 'keystroke latency A → B: Flint vs the reference Yjs server',
  async run(ctx): Promise<BenchReport> {
    const keystrokes = ctx.smoke ? 30 : 400;
    const warmup = ctx.smoke ? 5 : 20;
    const dataDir = mkdtempSync(join(tmpdir(), 'flint-bench-b6-'));
    const [gateway, yjs] = await Promise.all([ChildHost.start('gateway', { storeFile: join(dataDir, 'flint.sqlite') }), ChildHost.start('yjs')]);
    const pairs = [await flintPair(gateway), await yjsPair(yjs)];
    ctx.log(`${keystrokes} keystrokes per server (+${warmup} warm-up), alternating, ~5 ms apart`);
    for (let i = 0; i < warmup + keystrokes; i++) {
      for (const pair of Math.random() < 0.5 ? pairs : [...pairs].reverse()) {
        const ms = await keystroke(pair);
        if (i >= warmup) pair.samples.push(ms);
        await pause(2 + Math.random() * 6);
      }
    }
    for (const pair of pairs) pair.close();
    await Promise.all([gateway.stop(), yjs.stop()]);
    rmSync(dataDir, { recursive: true, force: true });

    const [flint, reference] = pairs.map((p) => ({ server: p.name, latencyMs: summarize(p.samples) }));
    return {
      tables: [
        {
          title: 'B6 keystroke in A → visible in B (ms)',
          columns: ['server', 'n', 'p50', 'p95', 'p99', 'max', 'ratio p50', 'ratio p99'],
          rows: [flint!, reference!].map((r) => [r.server, r.latencyMs.n, r.latencyMs.p50, r.latencyMs.p95, r.latencyMs.p99, r.latencyMs.max, r.latencyMs.p50 / reference!.latencyMs.p50, r.latencyMs.p99 / reference!.latencyMs.p99]),
          notes: [
            'one character inserted at a random position of a 2 KB file; measured from the insert in A to B\'s Y.Text observer.',
            'Flint persists every update to SQLite (WAL) before broadcasting it; the reference server keeps documents in memory only.',
          ],
        },
      ],
      targets: [
        { name: 'Flint keystroke latency vs reference Yjs server (p50)', target: 'no target set; ratio reported', actual: `${(flint!.latencyMs.p50 / reference!.latencyMs.p50).toFixed(2)}×`, met: null },
      ],
      data: { keystrokes, warmup, flint, reference },
    };
  },
};

function keystroke(pair: Pair): Promise<number> {
  return new Promise((resolve) => {
    const observer = () => {
      pair.b.unobserve(observer);
      resolve(performance.now() - t0);
    };
    pair.b.observe(observer);
    const t0 = performance.now();
    pair.a.insert(Math.floor(Math.random() * pair.a.length), 'x');
  });
}

async function flintPair(gateway: ChildHost): Promise<Pair> {
  const { workspaceId, token } = await gateway.call<{ workspaceId: string; token: string }>('createWorkspace', { name: 'B6', files: { 'a.ts': seedText } });
  const editorToken = await gateway.call<string>('shareEditor', { workspaceId });
  const [a, b] = await Promise.all([connectFlintClient(gateway.url, workspaceId, token), connectFlintClient(gateway.url, workspaceId, editorToken)]);
  const fileId = fileIdOf(a, 'a.ts');
  const [handleA, handleB] = [a.openDoc(fileId), b.openDoc(fileId)];
  await Promise.all([handleA.whenSynced(), handleB.whenSynced()]);
  return {
    name: 'Flint gateway',
    a: handleA.doc.getText(FILE_TEXT_KEY),
    b: handleB.doc.getText(FILE_TEXT_KEY),
    samples: [],
    close: () => {
      a.destroy();
      b.destroy();
    },
  };
}

async function yjsPair(yjs: ChildHost): Promise<Pair> {
  const docA = new Y.Doc();
  const docB = new Y.Doc();
  // No BroadcastChannel: two providers in one process would otherwise bypass the server.
  const options = { WebSocketPolyfill: WebSocket as unknown as typeof globalThis.WebSocket, disableBc: true };
  const providerA = new WebsocketProvider(yjs.url, 'b6', docA, options);
  const providerB = new WebsocketProvider(yjs.url, 'b6', docB, options);
  await until(() => providerA.synced && providerB.synced, 'y-websocket providers to sync', 10_000);
  docA.getText(FILE_TEXT_KEY).insert(0, seedText);
  await until(() => docB.getText(FILE_TEXT_KEY).length === seedText.length, 'the seed text to reach B', 10_000);
  return {
    name: 'reference Yjs server (@y/websocket-server)',
    a: docA.getText(FILE_TEXT_KEY),
    b: docB.getText(FILE_TEXT_KEY),
    samples: [],
    close: () => {
      providerA.destroy();
      providerB.destroy();
    },
  };
}
