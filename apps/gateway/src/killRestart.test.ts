import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FlintClient, type WebSocketLike } from '@flint/client';
import { agentChars, FakeOpenAIServer, freePort, int, isDeleted, peopleText, propertyConfig, seededRandom, until as waitUntil } from '@flint/test-kit';
import { FILE_TEXT_KEY, INDEX_ENTRIES_KEY, type IndexEntry } from '@flint/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { WebSocket } from 'ws';

/**
 * The real gateway process, killed with SIGKILL at a seeded random moment while two people type
 * and the agent streams a rewrite, then restarted on the same data folder — CRASH_RUNS times
 * (20 in npm test, 50 in the soak). Each time both clients reconnect with their documents and
 * converge; every keystroke is there exactly once, and every character of the agent's that a
 * client had seen is still there (never written twice: the turn does not start again).
 */
const here = dirname(fileURLToPath(import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), 'flint-kill-'));
const children: ChildProcess[] = [];
const runs = Number(process.env.CRASH_RUNS ?? 20);
let model: FakeOpenAIServer;
beforeAll(async () => {
  model = await FakeOpenAIServer.start();
  // A rewrite that streams for about a second: long enough to be killed mid-turn.
  model.respondWith({ text: Array.from({ length: 40 }, (_, i) => `  agentLine${i}();\n`).join(''), tokensPerSecond: 150, chunkChars: 5 });
});
afterAll(async () => {
  await model.close();
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null && child.pid) process.kill(-child.pid, 'SIGKILL');
  }
  rmSync(dataDir, { recursive: true, force: true });
});

/** Starts main.ts in its own process group; resolves with the demo link once it is listening. */
function startGateway(port: number): Promise<{ child: ChildProcess; demoUrl: URL }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'main.ts')], {
    env: {
      ...process.env,
      PORT: String(port),
      FLINT_DATA_DIR: dataDir,
      FLINT_WEB_ROOT: dataDir,
      FLINT_PROVIDER: 'openai-chat',
      OPENAI_BASE_URL: model.baseUrl,
      OPENAI_API_KEY: 'crash-test',
      FLINT_MODEL_FAST: 'fake-spark',
    },
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
    child.stdout?.on('data', (chunk: Buffer) => process.env.CRASH_LOG && process.stdout.write(chunk));
    child.stderr?.on('data', (chunk: Buffer) => process.env.CRASH_LOG && process.stdout.write(chunk));
    child.on('exit', (code) => reject(new Error(`gateway exited (${code}) before listening:\n${out}`)));
  });
}

let debug: (() => string) | null = null;
const until = (condition: () => boolean, what: string) => waitUntil(condition, what, { timeoutMs: 15_000, debug: () => debug?.() ?? '' });

describe('gateway killed and restarted', () => {
  it(`${runs} seeded kill -9s while two people type and the agent streams: nothing seen is lost, nothing doubled`, async () => {
    const { seed } = propertyConfig(1);
    const random = seededRandom(seed);
    const port = await freePort();
    let gateway = await startGateway(port);
    const workspaceId = gateway.demoUrl.pathname.split('/').pop() ?? '';
    const token = gateway.demoUrl.hash.replace('#token=', '');
    const make = () =>
      new FlintClient({
        url: `ws://127.0.0.1:${port}/ws`,
        workspaceId,
        token,
        minBackoffMs: 20,
        maxBackoffMs: 100,
        createSocket: (u) => new WebSocket(u) as unknown as WebSocketLike,
      });
    const alice = make();
    const bob = make();
    const entries = alice.index.doc.getMap<IndexEntry>(INDEX_ENTRIES_KEY);
    await until(() => entries.has('src/format.ts'), 'the demo workspace');
    const entry = entries.get('src/format.ts');
    const fileId = entry?.kind === 'file' ? entry.fileId : '';
    const a = alice.openDoc(fileId);
    const b = bob.openDoc(fileId);
    await Promise.all([a.whenSynced(), b.whenSynced()]);
    const ta = a.doc.getText(FILE_TEXT_KEY);
    const tb = b.doc.getText(FILE_TEXT_KEY);
    const turns: string[] = [];
    alice.onTurn((turn) => turn.status !== 'streaming' && turns.push(`${turn.status}${turn.error ? `: ${turn.error.message}` : ''}`));
    debug = () => JSON.stringify({ turns, alice: alice.status, bob: bob.status, faults: [alice.faultCount, bob.faultCount], ta: ta.toString().slice(0, 3000), tb: tb.toString().slice(0, 3000), missing: typed.filter((m) => !peopleText(a.doc).includes(m)) }, null, 1);
    const typed: string[] = [];
    const type = (text: Y.Text, who: string) => {
      const mark = `<${who}${typed.length}>`;
      typed.push(mark);
      // Before the first line or after it: never inside another mark, nor in the region the
      // agent rewrites (the end of the file), whose original text a turn may rightly remove.
      text.insert(random() < 0.5 ? 0 : text.toString().indexOf('\n') + 1, mark);
    };

    let killedWhileAgentWrote = 0;
    let agentSeenBefore = 0;
    for (let run = 0; run < runs; run++) {
      const context = `seed ${seed}, run ${run}`;
      await until(() => alice.status.kind === 'open' && bob.status.kind === 'open', `${context}: both connected`);
      if (random() < 0.7) {
        const end = ta.length;
        const result = await alice.prompt({ fileId, anchor: end - 1 - int(random, 40), head: end, instruction: 'rewrite' });
        // busy: the last run's turn still streams; rate_limited: runs come fast. Both are fine.
        expect(result.ok || ['busy', 'rate_limited'].includes(result.code), `${context}: ${JSON.stringify(result)}`).toBe(true);
      }
      // Type for a random while, then kill at that random moment.
      const keystrokes = 1 + int(random, 30);
      for (let i = 0; i < keystrokes; i++) {
        type(random() < 0.5 ? ta : tb, random() < 0.5 ? 'a' : 'b');
        await new Promise((r) => setTimeout(r, int(random, 25)));
      }
      const seenByA = agentChars(a.doc);
      const seenByB = agentChars(b.doc);
      if (seenByA.size + seenByB.size > agentSeenBefore) killedWhileAgentWrote++;
      agentSeenBefore = seenByA.size + seenByB.size;
      if (gateway.child.pid) process.kill(-gateway.child.pid, 'SIGKILL');
      await until(() => alice.status.kind === 'connecting' && bob.status.kind === 'connecting', `${context}: clients to notice`);
      type(ta, 'a'); // typed while the gateway is down
      type(tb, 'b');
      gateway = await startGateway(port);
      await until(() => alice.status.kind === 'open' && bob.status.kind === 'open', `${context}: reconnect`);
      await until(() => ta.toString() === tb.toString() && typed.every((m) => peopleText(a.doc).includes(m)), `${context}: convergence`);
      const final = peopleText(a.doc);
      for (const mark of typed) expect(final.split(mark), `${context}: ${mark} once`).toHaveLength(2);
      const agentNow = agentChars(a.doc);
      for (const id of [...seenByA, ...seenByB]) expect(agentNow.has(id) || isDeleted(a.doc, id), `${context}: agent character ${id}`).toBe(true);
    }
    // The runs must have caught the agent mid-turn, or they prove nothing about its text.
    expect(killedWhileAgentWrote, `seed ${seed}: ${JSON.stringify(turns)}`).toBeGreaterThan(runs / 4);
    console.log(`crash durability: seed ${seed}, ${runs} kill -9s, ${killedWhileAgentWrote} while the agent's text was arriving`);
    alice.destroy();
    bob.destroy();
  }, 600_000);
});
