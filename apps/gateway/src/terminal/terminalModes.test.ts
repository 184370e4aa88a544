import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerMessage } from '@flint/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import type { TerminalPeer } from '../core/TerminalHost';
import { TerminalService, type TerminalServiceOptions } from './TerminalService';

/**
 * [P40] [P44] What the service does where the sandbox cannot run, with the operator's unsafe
 * flag, and when the last person leaves a workspace — through its TerminalHost face, with peers
 * that record what they are sent.
 */
const base = mkdtempSync(join(tmpdir(), 'flint-term-modes-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

function service(mode: TerminalServiceOptions['mode']): TerminalService {
  return new TerminalService({
    mode,
    supportDir: join(base, 'support'),
    folder: async () => ({ root: base, hidden: [], flush: async () => {}, release: async () => {} }),
    settings: { get: () => null, set: () => {} },
    log: () => {},
  });
}

function peer(role: 'owner' | 'editor' | 'viewer', linkId = role): TerminalPeer & { sent: ServerMessage[] } {
  const sent: ServerMessage[] = [];
  return { sessionId: `s-${linkId}`, linkId, role, user: { name: role, color: '#888888' } as never, sent, sendTerminal: (m) => void sent.push(m), terminalBacklogged: () => false };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function sleeping(marker: string): number {
  return readdirSync('/proc').filter((pid) => {
    try {
      return /^\d+$/.test(pid) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').startsWith(`sleep ${marker}`);
    } catch {
      return false;
    }
  }).length;
}

describe('terminal modes', () => {
  it('[P40] off: the state says why, and opening one is refused with that reason', async () => {
    const terminals = service({ kind: 'off', reason: 'bubblewrap is not installed' });
    const owner = peer('owner');
    terminals.joined(owner, 'w');
    expect(owner.sent[0]).toMatchObject({ type: 'term.state', availability: { enabled: false, unsandboxed: false, reason: 'bubblewrap is not installed' } });
    terminals.handle({ type: 'term.open', requestId: 1, cols: 80, rows: 24 }, owner, 'w');
    expect(owner.sent.at(-1)).toMatchObject({ type: 'result', requestId: 1, ok: false, code: 'not_configured', message: 'bubblewrap is not installed' });
    await terminals.close();
  });

  it('[P40] unsafe: it runs, says it is not sandboxed, and still hands the shell none of the gateway environment', async () => {
    const terminals = service({ kind: 'unsafe' });
    const owner = peer('owner');
    terminals.joined(owner, 'w');
    expect(owner.sent[0]).toMatchObject({ availability: { enabled: true, unsandboxed: true } });
    process.env.FLINT_MODES_TEST_SECRET = 'unsafe-secret';
    const result = await terminals.runSandboxed('w', 'env; echo ran-$((1+1))', 'test', new AbortController().signal);
    delete process.env.FLINT_MODES_TEST_SECRET;
    expect(result.output).toContain('ran-2');
    expect(result.output).not.toContain('unsafe-secret');
    await terminals.close();
  });

  it("[P44] the last person leaving ends the workspace's terminals and their processes", async () => {
    const terminals = service({ kind: 'sandbox' });
    const owner = peer('owner');
    const viewer = peer('viewer');
    terminals.joined(owner, 'w');
    terminals.joined(viewer, 'w');
    terminals.handle({ type: 'term.open', requestId: 1, cols: 80, rows: 24 }, owner, 'w');
    await until(() => owner.sent.some((m) => m.type === 'result' && m.ok), 'the terminal');
    const termId = (owner.sent.find((m) => m.type === 'result' && m.ok) as { termId: string }).termId;
    const marker = `515151${Date.now() % 1000}`;
    terminals.handle({ type: 'term.input', termId, data: `sleep ${marker} &\r` }, owner, 'w');
    await until(() => sleeping(marker) === 1, 'the sleep to start');
    terminals.left(owner, 'w');
    expect(sleeping(marker)).toBe(1); // someone is still there
    terminals.left(viewer, 'w');
    await until(() => sleeping(marker) === 0, 'the sleep to end with the workspace');
    await terminals.close();
  });
});
