import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FlintClient, type WebSocketLike } from '@flint/client';
import { FILE_TEXT_KEY, INDEX_ENTRIES_KEY, type IndexEntry } from '@flint/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';

/**
 * The real gateway process, killed with SIGKILL while two people type, then restarted on the
 * same data folder: both clients reconnect and converge, and no keystroke is lost or doubled.
 */
const here = dirname(fileURLToPath(import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), 'flint-kill-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null && child.pid) process.kill(-child.pid, 'SIGKILL');
  }
  rmSync(dataDir, { recursive: true, force: true });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** Starts main.ts in its own process group; resolves with the demo link once it is listening. */
function startGateway(port: number): Promise<{ child: ChildProcess; demoUrl: URL }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'main.ts')], {
    env: { ...process.env, PORT: String(port), FLINT_DATA_DIR: dataDir, FLINT_WEB_ROOT: dataDir },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /owner link\): (\S+)/.exec(out);
      if (match?.[1]) resolve({ child, demoUrl: new URL(match[1]) });
    });
    child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('exit', (code) => reject(new Error(`gateway exited (${code}) before listening:\n${out}`)));
  });
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1500; i++) {
    if (condition()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('gateway killed and restarted', () => {
  it('two typing clients reconnect and converge with nothing lost or duplicated', async () => {
    const port = await freePort();
    const first = await startGateway(port);
    const workspaceId = first.demoUrl.pathname.split('/').pop() ?? '';
    const token = first.demoUrl.hash.replace('#token=', '');
    const make = () =>
      new FlintClient({
        url: `ws://127.0.0.1:${port}/ws`,
        workspaceId,
        token,
        minBackoffMs: 50,
        maxBackoffMs: 200,
        createSocket: (u) => new WebSocket(u) as unknown as WebSocketLike,
      });
    const alice = make();
    const bob = make();
    const entries = alice.index.doc.getMap<IndexEntry>(INDEX_ENTRIES_KEY);
    await until(() => entries.has('src/index.ts'), 'the demo workspace');
    const entry = entries.get('src/index.ts');
    const fileId = entry?.kind === 'file' ? entry.fileId : '';
    const a = alice.openDoc(fileId);
    const b = bob.openDoc(fileId);
    await Promise.all([a.whenSynced(), b.whenSynced()]);
    const ta = a.doc.getText(FILE_TEXT_KEY);
    const tb = b.doc.getText(FILE_TEXT_KEY);
    const original = ta.toString();
    const typed: string[] = [];
    const type = (text: typeof ta, who: string, n: number) => {
      for (let i = 0; i < n; i++) {
        const mark = `<${who}${typed.length}>`;
        typed.push(mark);
        text.insert(text.length, mark);
      }
    };
    type(ta, 'a', 5);
    type(tb, 'b', 5);
    await until(() => ta.toString() === tb.toString() && typed.every((m) => ta.toString().includes(m)), 'first edits to meet');

    if (first.child.pid) process.kill(-first.child.pid, 'SIGKILL');
    await until(() => alice.status.kind === 'connecting' && bob.status.kind === 'connecting', 'clients to notice');
    type(ta, 'a', 5); // typed while the gateway is down
    type(tb, 'b', 5);
    await startGateway(port);
    type(ta, 'a', 3);
    await until(() => alice.status.kind === 'open' && bob.status.kind === 'open', 'reconnect');
    await until(() => ta.toString() === tb.toString() && typed.every((m) => tb.toString().includes(m)), 'convergence');

    const final = ta.toString();
    for (const mark of typed) expect(final.split(mark)).toHaveLength(2);
    expect(final.startsWith(original)).toBe(true);
    alice.destroy();
    bob.destroy();
  }, 60_000);
});
