/**
 * B16 — shared terminals (issue 35). Side by side in one run, in one process:
 * 1. keystroke → echo at a second client: through Flint (owner's FlintClient → gateway → pty in
 *    the sandbox → headless screen → batch → the watcher's FlintClient) vs a bare node-pty ↔
 *    WebSocket relay around the same sandboxed pty, keystrokes interleaved arm by arm. The pty
 *    runs `cat` in raw mode, so each keystroke comes back as exactly one byte.
 * 2. an editor keystroke (Y.Text insert at A, seen at B) in the same workspace at rest and while a
 *    terminal both tabs watch runs `yes | head -c 100M`; and the bytes per second that terminal
 *    delivered to the watcher.
 * B16_KEYS (default 300), B16_FLOOD_MB (default 100; smoke 8).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FlintClient } from '@flint/client';
import { FILE_TEXT_KEY, type TerminalMessage } from '@flint/protocol';
import { WebSocket } from 'ws';
import { defaultSandboxLimits, probeSandbox, sandboxCommand, TerminalService, workspaceFolders } from '@flint/gateway';
import type { Benchmark, BenchReport } from '../lib/Benchmark';
import { connectFlintClient, fileIdOf } from '../lib/connectFlintClient';
import { summarize, type Summary } from '../lib/percentile';
import { pause, until } from '../lib/until';
import { startBenchGateway } from '../servers/startBenchGateway';
import { startPtyRelayServer } from '../servers/ptyRelayServer';

const rawCat = 'stty raw -echo; exec cat';

/** Waits for the next terminal output at a client, timing from `sentAt`. */
function nextOutput(subscribe: (listener: () => void) => () => void, send: () => void): Promise<number> {
  return new Promise((resolve) => {
    let sentAt = 0;
    const stop = subscribe(() => {
      stop();
      resolve(performance.now() - sentAt);
    });
    sentAt = performance.now();
    send();
  });
}

export const b16Terminal: Benchmark = {
  id: 'B16',
  name: 'b16-terminal',
  title: 'a shared terminal: keystroke echo vs a bare pty relay; editor keystrokes under a yes flood',
  async run(ctx): Promise<BenchReport> {
    const keys = Number(process.env.B16_KEYS ?? (ctx.smoke ? 40 : 300));
    const floodMb = Number(process.env.B16_FLOOD_MB ?? (ctx.smoke ? 8 : 100));
    const base = mkdtempSync(join(tmpdir(), 'flint-bench-b16-'));
    const supportDir = join(base, 'support');
    const probe = probeSandbox(supportDir);
    if (!probe.ok) throw new Error(`B16 needs the sandbox: ${probe.reason}`);
    let bench: Awaited<ReturnType<typeof startBenchGateway>> | null = null;
    const terminals = new TerminalService({
      mode: { kind: 'sandbox' },
      supportDir,
      folder: workspaceFolders({ folderProject: () => null, holdRoom: (id) => bench!.gateway.holdRoom(id), workRoot: join(base, 'work'), dataDir: join(base, 'data'), log: () => {} }),
      settings: { get: () => null, set: () => {} },
      log: () => {},
    });
    bench = await startBenchGateway({ terminals });
    const relayFolder = join(base, 'relay');
    mkdirSync(relayFolder, { recursive: true });
    const relayCommand = sandboxCommand({ folder: relayFolder, network: false, limits: defaultSandboxLimits, supportDir }, ['/bin/sh', '-c', rawCat]);
    const relay = await startPtyRelayServer(relayCommand.file, relayCommand.args, relayFolder);
    const clients: FlintClient[] = [];
    const sockets: WebSocket[] = [];
    try {
      const created = bench.gateway.createWorkspace('B16', { 'notes.md': 'start\n' });
      const editor = bench.gateway.links.create(created.workspaceId, 'editor', 'B', null);
      const a = await connectFlintClient(bench.wsUrl, created.workspaceId, created.owner.token);
      const b = await connectFlintClient(bench.wsUrl, created.workspaceId, editor.token);
      clients.push(a, b);
      const outputListeners = new Set<(m: TerminalMessage) => void>();
      b.onTerminal((m) => {
        for (const l of outputListeners) l(m);
      });
      const open = async () => {
        const result = await a.request({ type: 'term.open', cols: 100, rows: 30 });
        if (!result.ok || !result.termId) throw new Error(`no terminal: ${result.ok ? 'no id' : result.message}`);
        b.sendTerminal({ type: 'term.watch', termId: result.termId, watch: true });
        return result.termId;
      };
      const echoTerm = await open();
      let seen = '';
      const collect = (m: TerminalMessage) => {
        if ((m.type === 'term.output' || m.type === 'term.screen') && m.termId === echoTerm) seen += m.data;
      };
      outputListeners.add(collect);
      a.sendTerminal({ type: 'term.input', termId: echoTerm, data: `${rawCat}\r` });
      await until(() => seen.includes('exec cat'), 'the echo terminal to start');
      await pause(300);
      outputListeners.delete(collect);

      // The relay's two clients.
      const relayA = new WebSocket(relay.url, { perMessageDeflate: false });
      const relayB = new WebSocket(relay.url, { perMessageDeflate: false });
      sockets.push(relayA, relayB);
      await Promise.all([relayA, relayB].map((ws) => new Promise((resolve) => ws.once('open', resolve))));
      await pause(300);

      const flintMs: number[] = [];
      const relayMs: number[] = [];
      for (let i = 0; i < keys; i++) {
        const ch = String.fromCharCode(97 + (i % 26));
        flintMs.push(
          await nextOutput(
            (listener) => {
              const l = (m: TerminalMessage) => m.type === 'term.output' && m.termId === echoTerm && listener();
              outputListeners.add(l);
              return () => outputListeners.delete(l);
            },
            () => a.sendTerminal({ type: 'term.input', termId: echoTerm, data: ch }),
          ),
        );
        relayMs.push(
          await nextOutput(
            (listener) => {
              relayB.on('message', listener);
              return () => relayB.off('message', listener);
            },
            () => relayA.send(ch),
          ),
        );
        if (i % 50 === 0) ctx.progress(`keystroke ${i}`);
      }
      const flint = summarize(flintMs);
      const bare = summarize(relayMs);

      // Editor keystrokes: at rest, then under a flood both tabs watch.
      const fileId = fileIdOf(a, 'notes.md');
      const aText = a.openDoc(fileId).doc.getText(FILE_TEXT_KEY);
      const bText = b.openDoc(fileId).doc.getText(FILE_TEXT_KEY);
      await until(() => bText.toString() === 'start\n', 'the file at B');
      const editorKey = (i: number) =>
        new Promise<number>((resolve) => {
          const marker = `k${i};`;
          const sentAt = performance.now();
          const check = () => {
            if (!bText.toString().includes(marker)) return;
            bText.unobserve(check);
            resolve(performance.now() - sentAt);
          };
          bText.observe(check);
          aText.insert(aText.length, marker);
        });
      const restMs: number[] = [];
      for (let i = 0; i < Math.min(keys, 150); i++) {
        restMs.push(await editorKey(i));
        await pause(10);
      }
      const floodTerm = await open();
      a.sendTerminal({ type: 'term.watch', termId: floodTerm, watch: true });
      let floodBytes = 0;
      let floodDone = false;
      const floodListener = (m: TerminalMessage) => {
        if ((m.type === 'term.output' || m.type === 'term.screen') && m.termId === floodTerm) {
          floodBytes += m.data.length;
          if (m.data.includes('FLOOD-2-END')) floodDone = true;
        }
      };
      outputListeners.add(floodListener);
      await pause(300);
      const floodStart = performance.now();
      a.sendTerminal({ type: 'term.input', termId: floodTerm, data: `yes | head -c ${floodMb * 1024 * 1024}; echo FLOOD-$((1+1))-END\r` });
      const floodMs: number[] = [];
      for (let i = 10_000; !floodDone; i++) {
        floodMs.push(await editorKey(i));
        if (i % 50 === 0) ctx.progress(`flood keystroke ${i - 10_000}`);
        await pause(10);
        if (performance.now() - floodStart > 600_000) throw new Error('the flood did not end in 10 minutes');
      }
      const floodSeconds = (performance.now() - floodStart) / 1000;
      outputListeners.delete(floodListener);
      const rest = summarize(restMs);
      const flood = summarize(floodMs);
      const ratio = (x: Summary, y: Summary, k: 'p50' | 'p99') => x[k] / y[k];
      return {
        tables: [
          {
            title: 'keystroke → echo at a second client (ms)',
            columns: ['arm', 'n', 'p50', 'p95', 'p99', 'max'],
            rows: [
              ['Flint (gateway, headless screen, batches)', flint.n, flint.p50, flint.p95, flint.p99, flint.max],
              ['bare node-pty ↔ WebSocket relay', bare.n, bare.p50, bare.p95, bare.p99, bare.max],
            ],
            notes: ['Both arms: the same bubblewrap sandbox, `cat` in raw mode; keystrokes interleaved arm by arm, one in flight.'],
          },
          {
            title: `editor keystroke A → B (ms), at rest vs during yes | head -c ${floodMb}M in a terminal both watch`,
            columns: ['phase', 'n', 'p50', 'p95', 'p99', 'max'],
            rows: [
              ['at rest', rest.n, rest.p50, rest.p95, rest.p99, rest.max],
              ['during the flood', flood.n, flood.p50, flood.p95, flood.p99, flood.max],
            ],
            notes: [`The flood reached the watcher at ${(floodBytes / 1024 / 1024 / floodSeconds).toFixed(1)} MiB/s (${(floodBytes / 1024 / 1024).toFixed(1)} MiB in ${floodSeconds.toFixed(1)} s; the terminal's rate limit is 4 MiB/s).`],
          },
        ],
        targets: [
          { name: 'echo p50 vs bare relay', target: '≤ 1.2×', actual: `${ratio(flint, bare, 'p50').toFixed(2)}×`, met: ratio(flint, bare, 'p50') <= 1.2 },
          { name: 'echo p99 vs bare relay', target: '≤ 1.2×', actual: `${ratio(flint, bare, 'p99').toFixed(2)}×`, met: ratio(flint, bare, 'p99') <= 1.2 },
          { name: 'editor p50 under flood vs rest', target: '≤ 1.2×', actual: `${ratio(flood, rest, 'p50').toFixed(2)}×`, met: ratio(flood, rest, 'p50') <= 1.2 },
          { name: 'editor p99 under flood vs rest', target: '≤ 1.2×', actual: `${ratio(flood, rest, 'p99').toFixed(2)}×`, met: ratio(flood, rest, 'p99') <= 1.2 },
        ],
        data: { flint, bare, rest, flood, floodBytes, floodSeconds, floodMb },
      };
    } finally {
      for (const ws of sockets) ws.terminate();
      for (const c of clients) c.destroy();
      relay.kill();
      await relay.close();
      await terminals.close();
      await bench.close();
      rmSync(base, { recursive: true, force: true });
    }
  },
};
