/**
 * Playground mode (issue 37, decision 0032) through its REST routes on a real server (port 0),
 * a real gateway on SQLite, and a fake clock: 200 visitors from 20 addresses within a minute
 * meet the caps as configured (429 with Retry-After), each gets a workspace no other visitor's
 * link opens, expired workspaces are gone from the store and from memory, and an owner resets
 * a workspace to its template in place.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CloseCode, FILE_TEXT_KEY } from '@flint/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { Harness, fileIdOf, textOf } from '../../test/testHarness';
import { demoWorkspaceFiles } from '../seed/demoWorkspace';
import { SqliteStore } from '../storage/SqliteStore';
import { startServer, type RunningServer } from '../transport/httpServer';
import { createPlaygroundApi } from '../transport/playgroundApi';
import { Playground, type PlaygroundConfig } from './Playground';

let server: RunningServer | null = null;
let scratch: string | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  scratch = null;
});

const template = { name: 'Tally (playground)', files: demoWorkspaceFiles };

async function setUp(config: PlaygroundConfig) {
  scratch = mkdtempSync(join(tmpdir(), 'flint-playground-'));
  const store = new SqliteStore(join(scratch, 'flint.sqlite'));
  const h = new Harness(store);
  const meta = { get: (k: string) => store.getMeta(k), set: (k: string, v: string) => store.setMeta(k, v) };
  const gateway = h.gateway;
  const playground = new Playground(
    { createWorkspace: (name, files) => gateway.createWorkspace(name, files), deleteWorkspace: (id) => gateway.deleteWorkspace(id), sessionsIn: (id) => gateway.sessionsIn(id), setStorageQuota: (id, bytes) => gateway.setStorageQuota(id, bytes), meta },
    template,
    h.clock,
    config,
  );
  const api = createPlaygroundApi(gateway, { playground, template, publicUrl: null, trustProxy: true });
  server = await startServer({ gateway, port: 0, host: '127.0.0.1', webRoot: '/nonexistent-web-root', allowedOrigins: null, publicUrl: null, log: () => {}, trustProxy: true, routes: [api] });
  const base = `http://127.0.0.1:${server.port}`;
  const visit = async (address: string) => {
    const res = await fetch(`${base}/api/playground/workspaces`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': address } });
    const body = (await res.json()) as { workspaceId?: string; url?: string; error?: string };
    const token = body.url ? new URL(body.url).hash.replace('#token=', '') : null;
    return { status: res.status, retryAfter: res.headers.get('retry-after'), workspaceId: body.workspaceId ?? null, token, error: body.error ?? null };
  };
  return { h, store, gateway, playground, base, visit };
}

describe('playground mode', () => {
  it('200 visitors from 20 addresses in a minute: caps and 429s as configured, each visitor isolated, the idle ones deleted with their data', async () => {
    const config = { idleMs: 10 * 60_000, maxLive: 150, perAddressPerHour: 8, sweepIntervalMs: 60_000 };
    const { h, store, gateway, playground, visit } = await setUp(config);
    const addresses = Array.from({ length: 20 }, (_, i) => `203.0.113.${i + 1}`);
    const results = [];
    for (let i = 0; i < 200; i++) {
      results.push({ address: addresses[i % 20]!, ...(await visit(addresses[i % 20]!)) });
      h.clock.advance(299); // 200 visits within 60 s of the fake clock
    }
    const created = results.filter((r) => r.status === 201);
    const refused = results.filter((r) => r.status === 429);
    // Round robin: the live cap fills at the 150th creation (each address's 8th visit, for the first ten).
    // Those ten addresses then hit the per-address cap (visits 9 and 10); the other ten, with 7 made
    // (a refused visit makes nothing, so counts for nothing), find the playground full three times.
    expect(created).toHaveLength(150);
    expect(refused).toHaveLength(50);
    expect(refused.filter((r) => /playground is full/.test(r.error!))).toHaveLength(30);
    const perAddress = refused.filter((r) => /in the last hour/.test(r.error!));
    expect(perAddress).toHaveLength(20);
    expect(new Set(perAddress.map((r) => r.address))).toEqual(new Set(addresses.slice(0, 10)));
    for (const r of refused) expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
    // An address's hour started at its first visit, under a minute ago: it waits the rest of it.
    for (const r of perAddress) expect(Number(r.retryAfter)).toBeGreaterThan(3600 - 61);
    for (const address of addresses) expect(created.filter((r) => r.address === address).length).toBeLessThanOrEqual(8);
    expect(new Set(created.map((r) => r.workspaceId)).size).toBe(150);
    expect(playground.liveCount).toBe(150);

    // Isolation: a visitor's owner token opens its own workspace, and no one else's (REST and WebSocket).
    for (let i = 0; i < created.length; i++) {
      const mine = created[i]!;
      const theirs = created[(i + 1) % created.length]!;
      expect(gateway.authenticate(mine.workspaceId!, mine.token!).ok).toBe(true);
      expect(gateway.authenticate(theirs.workspaceId!, mine.token!).ok).toBe(false);
    }
    const [alice, bob] = created;
    const intruder = h.client(bob!.workspaceId!, alice!.token!);
    h.settle(() => intruder.status.kind === 'closed');
    expect(intruder.status).toMatchObject({ kind: 'closed', code: CloseCode.Unauthorized });
    intruder.destroy();

    // Alice keeps a tab open; everyone else leaves. Past the idle time, a sweep deletes the rest with their data.
    const tab = h.client(alice!.workspaceId!, alice!.token!);
    h.settle(() => tab.status.kind === 'open');
    const bobsFile = `${bob!.workspaceId}/${gateway.holdRoom(bob!.workspaceId!)!.room.fileIdAt('src/format.ts')}`;
    h.clock.advance(config.idleMs + config.sweepIntervalMs);
    const expired = playground.sweep();
    expect(expired).toHaveLength(149);
    expect(playground.liveCount).toBe(1);
    for (const r of created.slice(1)) {
      expect(store.getWorkspace(r.workspaceId!)).toBeNull();
      expect(gateway.authenticate(r.workspaceId!, r.token!).ok).toBe(false);
      expect(gateway.isRoomLoaded(r.workspaceId!)).toBe(false);
    }
    expect(store.loadDoc(bobsFile).updates).toEqual([]);
    expect(store.getWorkspace(alice!.workspaceId!)).not.toBeNull();

    // Alice's tab closes; her workspace goes too, once idle long enough — and her tab is told it is gone.
    tab.destroy();
    h.flush();
    h.clock.advance(config.idleMs - 1);
    expect(playground.sweep()).toEqual([]);
    h.clock.advance(1);
    expect(playground.sweep()).toEqual([alice!.workspaceId]);
    expect(store.getWorkspace(alice!.workspaceId!)).toBeNull();
    expect(gateway.sessionCount).toBe(0);
    expect(gateway.metrics.render()).toMatch(/^flint_rooms_loaded 0$/m);
  });

  it('an hour after its first visits an address may create again, and the live list survives a restart', async () => {
    const config = { idleMs: 60 * 60_000, maxLive: 10, perAddressPerHour: 2, sweepIntervalMs: 60_000 };
    const { h, store, gateway, visit } = await setUp(config);
    expect((await visit('198.51.100.7')).status).toBe(201);
    h.clock.advance(1_000);
    const second = await visit('198.51.100.7');
    expect(second.status).toBe(201);
    const third = await visit('198.51.100.7');
    expect(third.status).toBe(429);
    expect(Number(third.retryAfter)).toBe(3599);
    h.clock.advance(3599_000);
    expect((await visit('198.51.100.7')).status).toBe(201);

    // A new process on the same store still knows which workspaces are the playground's, and expires them.
    const reborn = new Playground(
      { createWorkspace: (n, f) => gateway.createWorkspace(n, f), deleteWorkspace: (id) => gateway.deleteWorkspace(id), sessionsIn: (id) => gateway.sessionsIn(id), setStorageQuota: (id, bytes) => gateway.setStorageQuota(id, bytes), meta: { get: (k) => store.getMeta(k), set: (k, v) => store.setMeta(k, v) } },
      template,
      h.clock,
      config,
    );
    expect(reborn.liveCount).toBe(3);
    expect(reborn.isPlayground(second.workspaceId!)).toBe(true);
    h.clock.advance(config.idleMs);
    expect(reborn.sweep()).toHaveLength(3);
    expect(store.getWorkspace(second.workspaceId!)).toBeNull();
  });

  it("lets the owner reset a workspace to the template in place (links keep working), and refuses what a playground doesn't offer", async () => {
    const { h, gateway, base, visit } = await setUp({ idleMs: 60_000, maxLive: 10, perAddressPerHour: 10, sweepIntervalMs: 60_000 });
    const mine = await visit('192.0.2.1');
    const editor = gateway.share(mine.workspaceId!, mine.token!, { role: 'editor', label: 'Editor', expiresInMs: null });
    if (!editor.ok) throw new Error(editor.message);
    const tab = h.client(mine.workspaceId!, editor.value.token);
    h.settle(() => tab.status.kind === 'open' && tab.index.synced);
    const text = textOf(tab, fileIdOf(tab, 'src/format.ts'));
    h.settle(() => text.length > 0);
    text.insert(0, '// edited by a visitor\n');
    const gatewayText = () => gateway.document(mine.workspaceId!, gateway.holdRoom(mine.workspaceId!)!.room.fileIdAt('src/format.ts')!)!.getText(FILE_TEXT_KEY).toString();
    h.settle(() => gatewayText().startsWith('// edited by a visitor'));
    const post = (path: string, token: string, body: unknown = {}) =>
      fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify(body) });

    expect((await post(`/api/workspaces/${mine.workspaceId}/reset`, editor.value.token)).status).toBe(403);
    expect((await post(`/api/workspaces/${mine.workspaceId}/reset`, mine.token!, { by: 'Ada' })).status).toBe(204);
    h.settle(() => {
      const entry = tab.index.doc.getMap('entries').get('src/format.ts') as { fileId: string } | undefined;
      return entry !== undefined && tab.openDoc(entry.fileId).doc.getText(FILE_TEXT_KEY).toString() === demoWorkspaceFiles['src/format.ts'];
    });
    // The editor's tab stayed connected through the reset: its link still works.
    expect(tab.status.kind).toBe('open');
    expect(gatewayText()).toBe(demoWorkspaceFiles['src/format.ts']);
    tab.destroy();

    expect((await post('/api/workspaces', mine.token!, { name: 'mine' })).status).toBe(403);
    const connect = await fetch(`${base}/api/workspaces/${mine.workspaceId}/model`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${mine.token}` },
      body: JSON.stringify({ kind: 'ollama', model: 'x' }),
    });
    expect(connect.status).toBe(403);
    expect(await (await fetch(`${base}/api/playground`)).json()).toEqual({ playground: true, name: 'Tally (playground)', idleMinutes: 1 });
  });

  it("keeps each visitor's storage quota the operator's: set at the visit, and a visitor's PUT is refused", async () => {
    const quota = 5 * 1024 * 1024;
    const { gateway, base, visit } = await setUp({ idleMs: 60_000, maxLive: 10, perAddressPerHour: 10, sweepIntervalMs: 60_000, storageQuotaBytes: quota });
    const mine = await visit('192.0.2.9');
    expect(gateway.storageQuota(mine.workspaceId!)).toBe(quota);
    const put = await fetch(`${base}/api/workspaces/${mine.workspaceId}/quota`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${mine.token}` },
      body: JSON.stringify({ quotaBytes: 2 ** 40 }),
    });
    expect(put.status).toBe(403);
    expect(((await put.json()) as { error: string }).error).toMatch(/operator/);
    expect(gateway.storageQuota(mine.workspaceId!)).toBe(quota);
  });
});
