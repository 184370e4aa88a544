import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerMessage } from '@flint/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import type { TerminalPeer } from '../core/TerminalHost';
import { createGateway } from '../index';
import { SqliteStore } from '../storage/SqliteStore';
import { systemClock } from '../transport/systemClock';
import { TerminalService } from './TerminalService';
import { workspaceFolders } from './workspaceFolders';

/**
 * [P49] What a shell writes in a workspace's working copy enters the workspace only within its
 * storage quota: past it a file stays on disk only, the terminal says so in one line, and nothing
 * the workspace already held is lost; and a working copy's disk use is bounded. The real gateway,
 * working copy and sandbox.
 */
const base = mkdtempSync(join(tmpdir(), 'flint-term-quota-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

function peer(): TerminalPeer & { sent: ServerMessage[] } {
  const sent: ServerMessage[] = [];
  return { sessionId: 's-owner', linkId: 'owner', role: 'owner', user: { name: 'Alice', color: '#888888' } as never, sent, sendTerminal: (m) => void sent.push(m), terminalBacklogged: () => false };
}

async function until(condition: () => boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const shown = (p: { sent: ServerMessage[] }, termId: string) =>
  p.sent.map((m) => ((m.type === 'term.output' || m.type === 'term.screen') && m.termId === termId ? m.data : '')).join('');

async function setup(workRoot: string, limits: { quotaBytes?: number; workingCopyBytes?: number }) {
  let gateway: ReturnType<typeof createGateway> | null = null;
  const terminals = new TerminalService({
    mode: { kind: 'sandbox' },
    supportDir: join(base, 'support'),
    folder: workspaceFolders({
      folderProject: () => null,
      holdRoom: (id) => gateway!.holdRoom(id),
      workRoot,
      dataDir: join(base, 'data'),
      log: () => {},
      storageQuota: (id) => gateway!.storageQuota(id),
      workingCopyBytes: limits.workingCopyBytes,
      diskCheckMs: 200,
    }),
    settings: { get: () => null, set: () => {} },
    log: () => {},
  });
  gateway = createGateway({}, { store: new SqliteStore(':memory:'), clock: systemClock, terminals });
  const { workspaceId } = gateway.createWorkspace('Quota', { 'README.md': 'kept\n' });
  if (limits.quotaBytes) gateway.setStorageQuota(workspaceId, limits.quotaBytes);
  const held = gateway.holdRoom(workspaceId)!;
  const owner = peer();
  terminals.joined(owner, workspaceId);
  terminals.handle({ type: 'term.open', requestId: 1, cols: 200, rows: 30 }, owner, workspaceId);
  await until(() => owner.sent.some((m) => m.type === 'result' && m.ok), 'the terminal');
  const termId = (owner.sent.find((m) => m.type === 'result' && m.ok) as { termId: string }).termId;
  const readme = held.room.entries.get('README.md') as { fileId: string };
  return {
    owner,
    termId,
    room: held.room,
    type: (data: string) => terminals.handle({ type: 'term.input', termId, data }, owner, workspaceId),
    readme: () => held.room.textOf(readme.fileId),
    async close() {
      held.release();
      await terminals.close();
      gateway!.shutdown();
    },
  };
}

describe("a working copy and the workspace's storage quota", () => {
  it('[P49] files a shell writes enter the workspace only within its storage quota, with a notice in the terminal', async () => {
    const quotaBytes = 2 * 1024 * 1024;
    const t = await setup(join(base, 'work-quota'), { quotaBytes });
    // Twelve files of 300,000 bytes: 3.6 MB, past the 2 MiB quota.
    t.type('mkdir -p gen && for i in $(seq 12); do head -c 300000 /dev/zero | tr "\\0" a > gen/f$i.txt; sleep 0.05; done; echo FIN""ISHED\r');
    await until(() => shown(t.owner, t.termId).includes('FINISHED'), 'the writes');
    await until(() => shown(t.owner, t.termId).includes('storage quota'), 'the notice');
    await new Promise((resolve) => setTimeout(resolve, 1000)); // the last of the folder's events

    const generated = [...t.room.entries.keys()].filter((path) => path.startsWith('gen/'));
    expect(generated.length).toBeGreaterThan(0);
    expect(generated.length).toBeLessThan(12);
    expect(generated.length * 300_000).toBeLessThanOrEqual(quotaBytes);
    expect(shown(t.owner, t.termId)).toMatch(/\[flint\] gen\/f\d+\.txt was not added to the workspace: it would pass the workspace's storage quota \(2\.0 MB\)/);
    // What the workspace held stays.
    expect(t.readme()).toBe('kept\n');
    await t.close();
  });

  it("[P49] a working copy past its disk limit ends the terminal's processes, says why, and is discarded", async () => {
    const workRoot = join(base, 'work-disk');
    const t = await setup(workRoot, { workingCopyBytes: 1024 * 1024 });
    expect(readdirSync(workRoot)).toHaveLength(1);
    // Written past the limit, in a hidden folder the workspace never imports, by a process that keeps going.
    t.type('mkdir -p .big && for i in $(seq 40); do head -c 200000 /dev/urandom > .big/f$i.bin; sleep 0.05; done; echo NOT""REACHED\r');
    await until(() => shown(t.owner, t.termId).includes('passed its disk limit'), 'the notice', 30_000);
    await until(() => readdirSync(workRoot).length === 0, 'the working copy to be discarded');
    expect(shown(t.owner, t.termId)).toContain("[flint] This terminal's folder passed its disk limit (1.0 MB): its processes were ended");
    expect(shown(t.owner, t.termId)).not.toContain('NOTREACHED');
    expect(t.readme()).toBe('kept\n');
    await t.close();
  });
});
