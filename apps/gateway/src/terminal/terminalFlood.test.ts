import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FlintClient, type WebSocketLike } from '@flint/client';
import { FILE_TEXT_KEY, INDEX_ENTRIES_KEY, type IndexEntry, type TerminalMessage } from '@flint/protocol';
import { MemoryNetwork, type MemorySocketPair } from '@flint/test-kit';
import { afterAll, expect, it } from 'vitest';
import { createGateway } from '../index';
import { defaultConfig } from '../core/GatewayConfig';
import { SqliteStore } from '../storage/SqliteStore';
import { systemClock } from '../transport/systemClock';
import { TerminalService } from './TerminalService';
import { workspaceFolders } from './workspaceFolders';

/**
 * [P42] A flood (`yes`) in a shared terminal: a viewer whose socket is full gets no terminal
 * bytes queued behind it — its edits are not stuck behind them — and once it drains it gets the
 * screen as it is. The others' edits keep flowing meanwhile.
 */
const base = mkdtempSync(join(tmpdir(), 'flint-term-flood-'));
const net = new MemoryNetwork();
const terminals = new TerminalService({
  mode: { kind: 'sandbox' },
  supportDir: join(base, 'support'),
  folder: workspaceFolders({ folderProject: () => null, holdRoom: (id) => gateway.holdRoom(id), workRoot: join(base, 'work'), dataDir: join(base, 'data'), log: () => {} }),
  settings: { get: () => null, set: () => {} },
  log: () => {},
});
const gateway = createGateway({}, { store: new SqliteStore(':memory:'), clock: systemClock, terminals });

afterAll(async () => {
  await terminals.close();
  gateway.shutdown();
  rmSync(base, { recursive: true, force: true });
});

function tab(workspaceId: string, token: string) {
  let pair: MemorySocketPair | null = null;
  const client = new FlintClient({
    url: 'memory://gateway',
    workspaceId,
    token,
    timers: systemClock,
    createSocket: () =>
      (pair = net.open((p) => {
        const connection = gateway.connect(p.server);
        p.accept({ onMessage: (data) => connection.receive(data), onClose: () => connection.closed(), onDrain: () => connection.drained() });
      })).client as unknown as WebSocketLike,
  });
  const seen = { text: '', screens: 0, state: null as Extract<TerminalMessage, { type: 'term.state' }> | null };
  client.onTerminal((m) => {
    if (m.type === 'term.state') seen.state = m;
    if (m.type === 'term.screen') {
      seen.screens++;
      seen.text = m.data;
    }
    if (m.type === 'term.output') seen.text = (seen.text + m.data).slice(-200_000);
  });
  return { client, seen, pair: () => pair! };
}

async function until(condition: () => boolean, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    net.flush();
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
}

it('[P42] a stalled viewer holds at most a batch of terminal bytes, edits still flow, and it catches up with the screen', async () => {
  const created = gateway.createWorkspace('Flood', { 'notes.md': 'start\n' });
  const alice = tab(created.workspaceId, created.owner.token);
  const bob = tab(created.workspaceId, gateway.links.create(created.workspaceId, 'editor', 'Bob', null).token);
  const vic = tab(created.workspaceId, gateway.links.create(created.workspaceId, 'viewer', 'Vic', null).token);
  await until(() => [alice, bob, vic].every((t) => t.seen.state !== null), 'the tabs');
  let termId = '';
  void alice.client.request({ type: 'term.open', cols: 80, rows: 24 }).then((r) => (termId = r.ok ? (r.termId ?? '') : ''));
  await until(() => termId !== '', 'the terminal');
  vic.client.sendTerminal({ type: 'term.watch', termId, watch: true });
  await until(() => vic.seen.screens === 1, "the viewer's first screen");

  const fileId = (alice.client.index.doc.getMap<IndexEntry>(INDEX_ENTRIES_KEY).get('notes.md') as { fileId: string }).fileId;
  const aliceNotes = alice.client.openDoc(fileId).doc.getText(FILE_TEXT_KEY);
  const bobNotes = bob.client.openDoc(fileId).doc.getText(FILE_TEXT_KEY);
  await until(() => bobNotes.toString() === 'start\n', 'the file at Bob');

  vic.pair().stalled = true;
  alice.client.sendTerminal({ type: 'term.input', termId, data: 'yes flood | head -c 6000000; echo "DONE-$((20+22))"\r' });
  let peak = 0;
  let edits = 0;
  await until(() => {
    peak = Math.max(peak, vic.pair().server.bufferedBytes);
    // Bob types while the flood runs: each keystroke reaches Alice.
    if (alice.seen.text.includes('flood') && edits < 20 && aliceNotes.toString().includes(`k${edits}`.repeat(edits > 0 ? 1 : 0))) {
      bobNotes.insert(bobNotes.length, `k${++edits}`);
    }
    return alice.seen.text.includes('DONE-42');
  }, 'the flood to end at Alice');
  await until(() => aliceNotes.toString().includes(`k${edits}`), "Bob's last keystroke at Alice");
  expect(edits).toBeGreaterThan(1);
  // What the terminal may add to a full socket: a quarter of slowClientBytes, then one batch.
  expect(peak).toBeGreaterThan(defaultConfig.slowClientBytes / 4);
  expect(peak).toBeLessThanOrEqual(defaultConfig.slowClientBytes / 4 + 64 * 1024 + 4096);

  vic.pair().stalled = false;
  await until(() => vic.seen.screens >= 2 && vic.seen.text.includes('DONE-42'), 'the viewer to catch up with the screen');
  for (const t of [alice, bob, vic]) t.client.destroy();
}, 60_000);
