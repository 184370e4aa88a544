import type { FlintClient } from '@flint/client';
import { createDatabase, startPostgres } from '@flint/test-kit';
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { fileIdOf, Harness, textOf } from '../../test/testHarness';
import { PostgresStore } from './PostgresStore';

// [I2] (DESIGN §11.2: nothing acknowledged is lost) with a real PostgreSQL: a compaction that cannot take its document's lock, and a
// database that stops answering while an idle room unloads. Neither freezes a document nor ends
// the process; both are retried and lose nothing.

const postgres = await startPostgres();
const stores: PostgresStore[] = [];
afterAll(async () => {
  for (const store of stores) store.close();
  await postgres.stop();
});

function gateway(name: string, config: ConstructorParameters<typeof Harness>[1]) {
  const url = createDatabase(postgres, name);
  const store = new PostgresStore(url, { timeoutMs: 1_000 });
  stores.push(store);
  const h = new Harness(store, config);
  const ws = h.gateway.createWorkspace('Faults', { 'a.ts': 'x\n' });
  return { h, ws, url };
}

/**
 * Signals the server and each of its backends: PostgreSQL makes every backend the leader of its
 * own process group, so the postmaster's group does not reach them.
 */
function signalServer(signal: NodeJS.Signals): void {
  const children = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postgres.pid;
      } catch {
        return false; // it ended meanwhile
      }
    });
  for (const pid of [postgres.pid, ...children.map(Number)]) process.kill(pid, signal);
}

async function settled(h: Harness, done: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) {
    h.flush();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  expect(done()).toBe(true);
}

describe('a PostgreSQL that stalls', () => {
  it("[I2] a compaction that cannot take the document's advisory lock: edits keep reaching every tab and the store", async () => {
    const { h, ws, url } = gateway('compaction_locked', { compactEveryUpdates: 10 });
    const [alice, bob] = [0, 1].map(() => h.client(ws.workspaceId, ws.owner.token)) as [FlintClient, FlintClient];
    h.flush();
    const fileId = fileIdOf(alice, 'a.ts');
    const [ta, tb] = [textOf(alice, fileId), textOf(bob, fileId)];
    await settled(h, () => tb.length > 0 && ta.length > 0);

    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`${ws.workspaceId}/${fileId}`]);
    for (let i = 0; i < 14; i++) {
      ta.insert(ta.length, `a${i};`);
      h.flush();
    }
    await settled(h, () => h.gateway.metrics.counter('flint_compaction_failures_total') > 0);
    tb.insert(0, 'b;');
    await settled(h, () => ta.toString() === tb.toString());
    expect(ta.toString()).toContain('a13;');
    expect(ta.toString().startsWith('b;')).toBe(true);

    await holder.query('COMMIT');
    await holder.end();
    h.clock.advance(60_000); // the retry compacts now
    await settled(h, () => h.gateway.metrics.counter('flint_doc_compactions_total') > 0);
    const expected = ta.toString();
    h.restart();
    const carol = h.client(ws.workspaceId, ws.owner.token);
    await settled(h, () => carol.status.kind === 'open' && fileIdOf(carol, 'a.ts') !== '');
    const text = textOf(carol, fileIdOf(carol, 'a.ts'));
    await settled(h, () => text.toString() === expected);
  });

  it('[I2] PostgreSQL stopped while an idle room unloads: the room stays, the gateway lives, and it unloads once the database answers', async () => {
    const { h, ws } = gateway('unload_stalled', { idleUnloadMs: 1_000 });
    const alice = h.client(ws.workspaceId, ws.owner.token);
    h.flush();
    const ta = textOf(alice, fileIdOf(alice, 'a.ts'));
    await settled(h, () => ta.length > 0);
    ta.insert(0, 'kept;');
    await settled(h, () => h.gateway.document(ws.workspaceId, fileIdOf(alice, 'a.ts'))?.getText('content').toString() === 'kept;x\n');
    await new Promise((resolve) => setTimeout(resolve, 50)); // the append is committed
    signalServer('SIGSTOP'); // every backend of the server stops answering
    try {
      alice.destroy(); // the file's doc, released, cannot compact: it stays for the room's unload
      h.flush();
      expect(() => h.clock.advance(2_000)).not.toThrow();
      expect(h.gateway.isRoomLoaded(ws.workspaceId)).toBe(true);
      expect(h.gateway.metrics.counter('flint_unload_failures_total')).toBeGreaterThan(0);
    } finally {
      signalServer('SIGCONT');
    }
    h.clock.advance(300_000);
    expect(h.gateway.isRoomLoaded(ws.workspaceId)).toBe(false);
    h.restart();
    const carol = h.client(ws.workspaceId, ws.owner.token);
    await settled(h, () => carol.status.kind === 'open' && fileIdOf(carol, 'a.ts') !== '');
    const text = textOf(carol, fileIdOf(carol, 'a.ts'));
    await settled(h, () => text.toString() === 'kept;x\n');
  });
});
