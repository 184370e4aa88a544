import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerMessage } from '@flint/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import type { TerminalPeer } from '../core/TerminalHost';
import { TerminalService } from './TerminalService';

/**
 * [P48] Output that would stall a screen: `ESC [ 99999999 L` (insert lines, a huge count) made
 * the headless screen insert them one by one, so a late joiner got no screen (and a browser
 * watching froze). Through the service's TerminalHost face, the real sandbox behind it.
 */
const base = mkdtempSync(join(tmpdir(), 'flint-term-hostile-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

function peer(role: 'owner' | 'viewer', linkId: string = role): TerminalPeer & { sent: ServerMessage[] } {
  const sent: ServerMessage[] = [];
  return { sessionId: `s-${linkId}`, linkId, role, user: { name: role, color: '#888888' } as never, sent, sendTerminal: (m) => void sent.push(m), terminalBacklogged: () => false };
}

async function until(condition: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const shown = (p: { sent: ServerMessage[] }, termId: string) =>
  p.sent.map((m) => ((m.type === 'term.output' || m.type === 'term.screen') && m.termId === termId ? m.data : '')).join('');

describe('hostile terminal output', () => {
  it('[P48] a late watcher gets the screen promptly after the terminal printed CSI 99999999 L, and nobody is sent the huge count', async () => {
    const terminals = new TerminalService({
      mode: { kind: 'sandbox' },
      supportDir: join(base, 'support'),
      folder: async () => ({ root: base, hidden: [], flush: async () => {}, release: async () => {} }),
      settings: { get: () => null, set: () => {} },
      log: () => {},
    });
    const owner = peer('owner');
    terminals.joined(owner, 'w');
    terminals.handle({ type: 'term.open', requestId: 1, cols: 100, rows: 30 }, owner, 'w');
    await until(() => owner.sent.some((m) => m.type === 'result' && m.ok), 'the terminal');
    const termId = (owner.sent.find((m) => m.type === 'result' && m.ok) as { termId: string }).termId;
    terminals.handle({ type: 'term.input', termId, data: `printf '\\e[99999999L\\e[2147483647;2147483647r\\e[99999999@\\n'; echo MA""RK\r` }, owner, 'w');
    await until(() => shown(owner, termId).includes('MARK'), 'the output');
    expect(shown(owner, termId)).toContain('\x1b[9999L');
    expect(shown(owner, termId)).not.toContain('\x1b[99999999L');

    const late = peer('viewer', 'late');
    terminals.joined(late, 'w');
    terminals.handle({ type: 'term.watch', termId, watch: true }, late, 'w');
    await until(() => late.sent.some((m) => m.type === 'term.screen' && m.termId === termId), 'the screen for a late watcher');
    expect(shown(late, termId)).toContain('MARK');
    await terminals.close();
  });
});
