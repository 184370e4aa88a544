import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FlintClient, type WebSocketLike } from '@flint/client';
import { FILE_TEXT_KEY, INDEX_ENTRIES_KEY, readThread, type TerminalMessage, type TerminalSettings } from '@flint/protocol';
import { MemoryNetwork } from '@flint/test-kit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ScriptedProvider } from '../../test/ScriptedProvider';
import type { ModelRouter } from '../core/agent/ModelRouter';
import { createGateway, type Gateway } from '../index';
import { SqliteStore } from '../storage/SqliteStore';
import { systemClock } from '../transport/systemClock';
import { defaultTerminalSettings, TerminalService } from './TerminalService';
import { workspaceFolders } from './workspaceFolders';

/**
 * The agent's `run_command` through the real gateway, thread and sandbox, with the scripted
 * provider as the model ([P45]): asked, approved by the owner or someone the owner lets type,
 * its output back to the model. "May type" is the one capability to run code ([P43] [P45] [P47]):
 * an editor without it can write package.json's test script, but cannot make anything run it.
 */
const testScript = 'grep -q fixed status.txt && echo "PASS all green" || { echo "FAIL status.txt:1 expected fixed"; exit 1; }\n';

let base = '';
let net: MemoryNetwork;
let gateway: Gateway;
let terminals: TerminalService;
let provider: ScriptedProvider;
let workspaceId = '';
let alice: FlintClient;
let bob: FlintClient;
let bobLinkId = '';
let bobTerminal: Extract<TerminalMessage, { type: 'term.state' }> | null;
const settings = new Map<string, TerminalSettings>();

function client(token: string): FlintClient {
  return new FlintClient({
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
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
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

function scriptRun(command: string): void {
  provider.callTool('run_command');
  provider.toolArgs(JSON.stringify({ command }));
  provider.end();
}

/** The owner lets Bob type, which is also what lets him run the check and approve commands. */
async function letBobType(): Promise<void> {
  expect(await answered(alice.request({ type: 'term.grant', linkId: bobLinkId, mayType: true }))).toEqual({ ok: true });
  await until(() => bobTerminal?.you.mayType === true, 'Bob to be let type');
}

const toolSteps = () => readThread(alice.openThread().doc).messages.filter((m) => m.kind === 'tool');

beforeEach(async () => {
  base = mkdtempSync(join(tmpdir(), 'flint-agent-cmd-'));
  net = new MemoryNetwork();
  provider = new ScriptedProvider();
  const models: ModelRouter = () => ({ provider, model: 'scripted', contextTokens: 128_000, supportsPrediction: false, supportsTools: true });
  settings.clear();
  terminals = new TerminalService({
    mode: { kind: 'sandbox' },
    supportDir: join(base, 'support'),
    folder: workspaceFolders({ folderProject: () => null, holdRoom: (id) => gateway.holdRoom(id), workRoot: join(base, 'work'), dataDir: join(base, 'data'), log: () => {} }),
    settings: { get: (id) => settings.get(id) ?? null, set: (id, s) => void settings.set(id, s) },
    log: () => {},
  });
  gateway = createGateway({}, { store: new SqliteStore(':memory:'), clock: systemClock, terminals, models });
  const created = gateway.createWorkspace('Agent commands', { 'test.sh': testScript, 'status.txt': 'broken\n' });
  workspaceId = created.workspaceId;
  alice = client(created.owner.token);
  const bobLink = gateway.links.create(workspaceId, 'editor', 'Bob', null);
  bobLinkId = bobLink.link.id;
  bob = client(bobLink.token);
  bobTerminal = null;
  bob.onTerminal((m) => {
    if (m.type === 'term.state') bobTerminal = m;
  });
  await until(() => bobTerminal !== null && alice.status.kind === 'open', 'both tabs');
  alice.openThread();
});

afterEach(async () => {
  alice.destroy();
  bob.destroy();
  await terminals.close();
  gateway.shutdown();
  rmSync(base, { recursive: true, force: true });
});

describe("the agent's run_command", () => {
  it('[P45] runs the tests once an editor the owner lets type approves, sees the failure, fixes it, runs them green', async () => {
    scriptRun('sh test.sh');
    provider.callTool('apply_patch');
    provider.toolArgs(JSON.stringify({ patch: '*** Begin Patch\n*** Update File: status.txt\n@@\n-broken\n+fixed\n*** End Patch\n' }));
    provider.end();
    scriptRun('sh test.sh');
    provider.emit('All green.');
    provider.end();
    expect(await answered(alice.threadSend({ text: 'run the tests and fix what fails', mode: 'send' }))).toMatchObject({ ok: true });

    // Bob sees the request, but his approval counts only once the owner lets him type.
    await until(() => (bobTerminal?.approvals.length ?? 0) === 1, 'the first approval to be asked');
    expect(await answered(bob.request({ type: 'term.approve', approvalId: bobTerminal!.approvals[0]!.approvalId, approve: true }))).toMatchObject({ ok: false, code: 'forbidden' });
    expect(bobTerminal!.approvals).toHaveLength(1);
    expect(toolSteps().filter((m) => m.summary?.startsWith('ran '))).toEqual([]);
    await letBobType();
    for (const round of [1, 2]) {
      await until(() => (bobTerminal?.approvals.length ?? 0) === 1, `approval ${round} to be asked`);
      expect(bobTerminal!.approvals[0]!.command).toBe('sh test.sh');
      expect(await answered(bob.request({ type: 'term.approve', approvalId: bobTerminal!.approvals[0]!.approvalId, approve: true }))).toEqual({ ok: true });
      await until(() => toolSteps().filter((m) => m.summary?.startsWith('ran ')).length === round, `run ${round} to end`);
    }
    await until(() => readThread(alice.openThread().doc).turns[0]?.status === 'done', 'the turn to end');

    const runs = toolSteps().filter((m) => m.summary?.startsWith('ran '));
    expect(runs.map((m) => m.summary)).toEqual(['ran sh test.sh → exit 1 (approved by Someone)', 'ran sh test.sh → exit 0 (approved by Someone)']);
    // The model was told what failed, then that it passed.
    const told = provider.requests.flatMap((r) => r.messages).filter((m) => m.role === 'tool').map((m) => m.content);
    expect(told.find((c) => c.includes('FAIL status.txt:1'))).toContain('[exit 1]');
    expect(told.find((c) => c.includes('PASS all green'))).toContain('[exit 0]');
  });

  it('[P45] runs nothing when the owner says never, and only listed commands on an allow list', async () => {
    settings.set(workspaceId, { network: false, commandPolicy: 'never', allowedCommands: [] });
    scriptRun('sh test.sh');
    provider.emit('ok');
    provider.end();
    await answered(alice.threadSend({ text: 'test', mode: 'send' }));
    await until(() => readThread(alice.openThread().doc).turns[0]?.status === 'done', 'the first turn');
    expect(toolSteps()[0]?.summary).toMatch(/^not run: sh test.sh — The owner does not let the agent run commands/);

    settings.set(workspaceId, { network: false, commandPolicy: 'allow-list', allowedCommands: ['sh  test.sh'] });
    scriptRun('rm -rf .');
    scriptRun('sh test.sh');
    provider.emit('ok');
    provider.end();
    await answered(alice.threadSend({ text: 'test again', mode: 'send' }));
    await until(() => readThread(alice.openThread().doc).turns[1]?.status === 'done', 'the second turn');
    const summaries = toolSteps().map((m) => m.summary);
    expect(summaries[1]).toMatch(/^not run: rm -rf \. — "rm -rf \." is not on this workspace's allow list/);
    expect(summaries[2]).toBe('ran sh test.sh → exit 1 (approved by the allow list)');
    expect(bobTerminal?.approvals).toEqual([]);
  });

  it("Stop ends the agent's running command and the turn", async () => {
    settings.set(workspaceId, { network: false, commandPolicy: 'allow-list', allowedCommands: ['sleep 600'] });
    scriptRun('sleep 600');
    await answered(alice.threadSend({ text: 'wait', mode: 'send' }));
    await until(() => bobTerminal?.terminals.some((t) => t.kind === 'command' && t.title === 'sleep 600') ?? false, 'the command to show as a terminal');
    expect(await answered(alice.threadStop())).toMatchObject({ ok: true });
    await until(() => readThread(alice.openThread().doc).turns[0]?.status === 'cancelled', 'the turn to end cancelled');
    await until(() => bobTerminal?.terminals.length === 0, 'the command terminal to end');
  });

  it('[P45] an empty allow list by default: the owner names each command the agent may run unasked', async () => {
    expect(defaultTerminalSettings.allowedCommands).toEqual([]);
    expect(await answered(alice.request({ type: 'term.settings', settings: { ...defaultTerminalSettings, commandPolicy: 'allow-list' } }))).toEqual({ ok: true });
    scriptRun('npm test');
    provider.emit('ok');
    provider.end();
    await answered(alice.threadSend({ text: 'test', mode: 'send' }));
    await until(() => readThread(alice.openThread().doc).turns[0]?.status === 'done', 'the turn');
    expect(toolSteps()[0]?.summary).toMatch(/^not run: npm test — "npm test" is not on this workspace's allow list/);
  });

  it("[P47] an editor without 'may type' cannot run the check, whatever they wrote in the project", async () => {
    // The default check is `npm test`, which runs package.json's test script: a file editors write.
    settings.set(workspaceId, { ...defaultTerminalSettings, checkCommand: 'sh test.sh' });
    const testId = (alice.index.doc.getMap(INDEX_ENTRIES_KEY).get('test.sh') as { fileId: string }).fileId;
    const script = bob.openDoc(testId).doc.getText(FILE_TEXT_KEY);
    await until(() => script.length > 0, 'the script at Bob');
    script.delete(0, script.length);
    script.insert(0, 'echo RAN_BY_BOB > owned.txt\n');
    await until(() => gateway.document(workspaceId, testId)?.getText(FILE_TEXT_KEY).toString().includes('RAN_BY_BOB') ?? false, 'the edit at the gateway');
    expect(bobTerminal?.you.mayType).toBe(false);
    expect(await answered(bob.request({ type: 'term.check' }))).toMatchObject({ ok: false, code: 'forbidden' });
    expect(bobTerminal?.check).toBeNull();
    expect(bobTerminal?.terminals).toEqual([]);
  });

  it('[P47] Check runs the configured command for an editor and tells everyone whether it passed', async () => {
    settings.set(workspaceId, { network: false, commandPolicy: 'never', allowedCommands: [], checkCommand: 'sh test.sh' });
    await letBobType();
    expect(await answered(bob.request({ type: 'term.check' }))).toEqual({ ok: true });
    await until(() => bobTerminal?.check?.status === 'failed', 'the check to fail');
    expect(bobTerminal?.check).toMatchObject({ command: 'sh test.sh', exitCode: 1 });

    // Someone fixes the file; the working copy follows; the check passes.
    const statusId = (alice.index.doc.getMap(INDEX_ENTRIES_KEY).get('status.txt') as { fileId: string }).fileId;
    const text = alice.openDoc(statusId).doc.getText(FILE_TEXT_KEY);
    await until(() => text.toString() === 'broken\n', 'the file at Alice');
    text.delete(0, text.length);
    text.insert(0, 'fixed\n');
    await until(() => gateway.document(workspaceId, statusId)?.getText(FILE_TEXT_KEY).toString() === 'fixed\n', 'the fix at the gateway');
    expect(await answered(bob.request({ type: 'term.check' }))).toEqual({ ok: true });
    await until(() => bobTerminal?.check?.status === 'passed', 'the check to pass');

    const viewer = client(gateway.links.create(workspaceId, 'viewer', 'Vic', null).token);
    await until(() => viewer.status.kind === 'open', 'the viewer');
    expect(await answered(viewer.request({ type: 'term.check' }))).toMatchObject({ ok: false, code: 'forbidden' });
    viewer.destroy();
  });
});
