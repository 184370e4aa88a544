import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FlintClient, type WebSocketLike } from '@flint/client';
import { INDEX_ENTRIES_KEY, type TerminalMessage } from '@flint/protocol';
import { MemoryNetwork } from '@flint/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../index';
import { SqliteStore } from '../storage/SqliteStore';
import { systemClock } from '../transport/systemClock';
import { TerminalService } from './TerminalService';
import { workspaceFolders } from './workspaceFolders';

/**
 * Terminals in a room, through the real gateway and clients on in-memory sockets, the real
 * sandbox behind them: who sees what, who may type ([P42]–[P44]), and the working copy a
 * workspace without a folder gets.
 */
const base = mkdtempSync(join(tmpdir(), 'flint-term-room-'));
const net = new MemoryNetwork();
let gateway: Gateway;
let terminals: TerminalService;
let workspaceId = '';
const tokens = { owner: '', editor: '', viewer: '', editorId: '' };

interface Tab {
  client: FlintClient;
  /** Everything the tab's terminal would show, per terminal: screens and output in order. */
  seen: Map<string, string>;
  typists: string[];
  state: Extract<TerminalMessage, { type: 'term.state' }> | null;
}

function tab(token: string): Tab {
  const client = new FlintClient({
    url: 'memory://gateway',
    workspaceId,
    token,
    timers: systemClock,
    createSocket: () =>
      net.open((pair) => {
        const connection = gateway.connect(pair.server);
        pair.accept({ onMessage: (data) => connection.receive(data), onClose: () => connection.closed(), onDrain: () => connection.drained() });
      }).client as unknown as WebSocketLike,
  });
  const t: Tab = { client, seen: new Map(), typists: [], state: null };
  client.onTerminal((message) => {
    if (message.type === 'term.state') t.state = message;
    if (message.type === 'term.screen') t.seen.set(message.termId, message.data);
    if (message.type === 'term.output') t.seen.set(message.termId, (t.seen.get(message.termId) ?? '') + message.data);
    if (message.type === 'term.typist') t.typists.push(message.name);
  });
  return t;
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    net.flush();
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function answered<T>(promise: Promise<T>): Promise<T> {
  let settled = false;
  void promise.then(() => (settled = true));
  await until(() => settled, 'an answer');
  return promise;
}

/** Waits a moment of real I/O and asserts `text` never showed up. */
async function never(t: Tab, termId: string, text: string): Promise<void> {
  for (let i = 0; i < 30; i++) {
    net.flush();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  expect(t.seen.get(termId) ?? '').not.toContain(text);
}

beforeAll(() => {
  const store = new SqliteStore(':memory:');
  terminals = new TerminalService({
    mode: { kind: 'sandbox' },
    supportDir: join(base, 'support'),
    folder: workspaceFolders({ folderProject: () => null, holdRoom: (id) => gateway.holdRoom(id), workRoot: join(base, 'work'), dataDir: join(base, 'data'), log: () => {} }),
    settings: { get: () => null, set: () => {} },
    log: () => {},
  });
  gateway = createGateway({}, { store, clock: systemClock, terminals });
  const created = gateway.createWorkspace('Terminal room', { 'README.md': 'from the document\n' });
  workspaceId = created.workspaceId;
  tokens.owner = created.owner.token;
  const editor = gateway.links.create(workspaceId, 'editor', 'Bob', null);
  tokens.editor = editor.token;
  tokens.editorId = editor.link.id;
  tokens.viewer = gateway.links.create(workspaceId, 'viewer', 'Vic', null).token;
});

afterAll(async () => {
  await terminals.close();
  gateway.shutdown();
  rmSync(base, { recursive: true, force: true });
});

describe('a shared terminal', () => {
  let alice: Tab;
  let bob: Tab;
  let vic: Tab;
  let termId = '';

  it('[P41] the owner opens one in a working copy of the documents; everyone watching sees its output', async () => {
    alice = tab(tokens.owner);
    bob = tab(tokens.editor);
    vic = tab(tokens.viewer);
    await until(() => [alice, bob, vic].every((t) => t.state !== null), 'everyone to get the terminal state');
    expect(alice.state?.availability).toEqual({ enabled: true, unsandboxed: false, reason: null });
    const opened = alice.client.request({ type: 'term.open', cols: 80, rows: 24 });
    let result: Awaited<typeof opened> | null = null;
    void opened.then((r) => (result = r));
    await until(() => result !== null, 'the terminal to open');
    expect(result).toMatchObject({ ok: true });
    termId = (result as unknown as { termId: string }).termId;
    bob.client.sendTerminal({ type: 'term.watch', termId, watch: true });
    vic.client.sendTerminal({ type: 'term.watch', termId, watch: true });
    alice.client.sendTerminal({ type: 'term.input', termId, data: 'cat README.md; echo "sum=$((6*7))"\r' });
    for (const t of [alice, bob, vic]) await until(() => /sum=42/.test(t.seen.get(termId) ?? ''), 'the output at every tab');
    expect(bob.seen.get(termId)).toContain('from the document');
  });

  it('[P43] a viewer types nothing, whatever its tab sends, and stays connected', async () => {
    vic.client.sendTerminal({ type: 'term.input', termId, data: 'echo viewer-$((1+1))\r' });
    await never(alice, termId, 'viewer-2');
    expect(vic.client.status.kind).toBe('open');
    const grant = await answered(vic.client.request({ type: 'term.grant', linkId: tokens.editorId, mayType: true }));
    expect(grant).toMatchObject({ ok: false, code: 'forbidden' });
  });

  it('[P43] an editor types only once the owner lets them', async () => {
    bob.client.sendTerminal({ type: 'term.input', termId, data: 'echo early-$((2+2))\r' });
    await never(alice, termId, 'early-4');
    const granted = alice.client.request({ type: 'term.grant', linkId: tokens.editorId, mayType: true });
    let ok: unknown = null;
    void granted.then((r) => (ok = r));
    await until(() => ok !== null, 'the grant');
    expect(ok).toEqual({ ok: true });
    await until(() => bob.state?.people.find((p) => p.linkId === tokens.editorId)?.mayType === true, 'the grant to show');
    bob.client.sendTerminal({ type: 'term.input', termId, data: 'echo bob-$((3+3)) > from-bob.txt; cat from-bob.txt\r' });
    await until(() => /bob-6/.test(vic.seen.get(termId) ?? ''), "Bob's command at the viewer");
    expect(vic.typists.length).toBeGreaterThan(0);
    // What the shell wrote in the working copy becomes a file of the workspace.
    await until(() => alice.client.index.doc.getMap(INDEX_ENTRIES_KEY).has('from-bob.txt'), 'the file to reach the workspace');
  });

  it('[P42] a late joiner gets the screen as it is', async () => {
    const late = tab(tokens.viewer);
    await until(() => late.state?.terminals.some((t) => t.termId === termId) ?? false, 'the late tab to learn of the terminal');
    late.client.sendTerminal({ type: 'term.watch', termId, watch: true });
    await until(() => /sum=42/.test(late.seen.get(termId) ?? '') && /bob-6/.test(late.seen.get(termId) ?? ''), 'the screen at the late tab');
    late.client.destroy();
  });

  it('[P44] closing it ends every process in it', async () => {
    const closed = alice.client.request({ type: 'term.close', termId });
    let result: unknown = null;
    void closed.then((r) => (result = r));
    await until(() => result !== null, 'the close');
    expect(result).toEqual({ ok: true });
    await until(() => bob.state?.terminals.length === 0, 'the terminal to leave every tab');
  });
});
