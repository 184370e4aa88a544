import { spawnSync } from 'node:child_process';
import type { FlintClient } from '@flint/client';
import { CloseCode, readThread, type TurnInfo } from '@flint/protocol';
import { createDatabase, FakeOpenAIServer, startPostgres, startRedis, type RunningService } from '@flint/test-kit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, fileIdAt, openFile, revokeLink, shareLink, until } from '../../test/clusterTesting';
import { createWorkspace, GatewayProcesses, type GatewayProcess } from '../../test/gatewayProcesses';

/**
 * Real gateway processes on one PostgreSQL and one Redis, under the faults a cluster meets:
 * a subscription that drops as a revocation is announced, a gateway that freezes mid-turn, Redis
 * paused and PostgreSQL stalled or stopped as a balancer checks readiness (issue 31).
 */
let redis: RunningService;
let postgres: RunningService;
let model: FakeOpenAIServer;
let admin: Redis;
let databases = 0;
const clusters: GatewayProcesses[] = [];

beforeAll(async () => {
  redis = await startRedis();
  postgres = await startPostgres();
  model = await FakeOpenAIServer.start();
  admin = new Redis(redis.url);
}, 60_000);
afterAll(async () => {
  for (const cluster of clusters) await cluster.stopAll();
  admin?.disconnect();
  await Promise.all([redis?.stop(), postgres?.stop(), model?.close()]);
});

function newCluster(database: RunningService = postgres): GatewayProcesses {
  const name = `faults${databases++}`;
  const cluster = new GatewayProcesses({
    FLINT_DATABASE_URL: createDatabase(database, name),
    FLINT_REDIS_URL: redis.url,
    FLINT_REDIS_PREFIX: `${name}:`,
    FLINT_PROVIDER: 'openai-chat',
    OPENAI_BASE_URL: model.baseUrl,
    OPENAI_API_KEY: 'cluster-test',
    FLINT_MODEL_FAST: 'fake-spark',
  });
  clusters.push(cluster);
  return cluster;
}

interface ReadyzBody {
  ready: boolean;
  degraded?: string[];
  store?: { ok: boolean };
  cluster?: { connected: boolean };
}

async function readyz(g: GatewayProcess, query = ''): Promise<{ status: number; body: ReadyzBody }> {
  const res = await fetch(`${g.url}/readyz${query}`);
  return { status: res.status, body: (await res.json()) as ReadyzBody };
}

describe('a cluster under faults', () => {
  it("a link revoked while the other gateways' subscriptions are down is closed there too, and nothing its tabs send after the revocation is stored", async () => {
    const cluster = newCluster();
    const [g1, g2, g3] = await Promise.all([cluster.start(), cluster.start(), cluster.start()]);
    const { workspaceId, token } = await createWorkspace(g1!, 'Lost revocation', 'demo');
    // Started without FLINT_PUBLIC_URL: it says to set it, and sends no one to its own address.
    expect(g1!.output()).toContain('FLINT_PUBLIC_URL is not set');
    expect(g1!.output()).toContain('http://<load balancer>/api/workspaces');
    expect(g1!.output()).not.toContain(`${g1!.port}/api/workspaces`);
    const editor = await shareLink(g1!, workspaceId, token, 'editor');
    const alice = client(() => g1!, workspaceId, token);
    const bob = client(() => g2!, workspaceId, token);
    const carol = client(() => g3!, workspaceId, token);
    const eve2 = client(() => g2!, workspaceId, editor.token);
    const eve3 = client(() => g3!, workspaceId, editor.token);
    const idle3 = client(() => g3!, workspaceId, editor.token); // sends nothing after it opens
    const [ta, tb, tc, te2, te3] = await Promise.all([alice, bob, carol, eve2, eve3, idle3].map((c) => openFile(c, 'src/format.ts')));
    // Each tab knows which gateway it landed on: the id that gateway's /healthz shows.
    expect([alice, bob, carol].map((c) => (c.status.kind === 'open' ? c.status.gateway : null))).toEqual([g1!.id, g2!.id, g3!.id]);
    te2!.insert(0, '<eve2 before>');
    te3!.insert(0, '<eve3 before>');
    await until(() => ta!.toString().includes('<eve2 before>') && ta!.toString().includes('<eve3 before>'), 'the editor tabs writing through g2 and g3');

    // g2's and g3's subscriber connections are killed, and kept from coming back meanwhile.
    const connections = String(await admin.client('LIST')).split('\n').filter(Boolean);
    const subscribers = connections
      .filter((line) => /\bsub=[1-9]/.test(line) && [g2!, g3!].some((g) => line.includes(`name=flint-${g.id} `)))
      .map((line) => /\bid=(\d+)/.exec(line)![1]!);
    expect(subscribers).toHaveLength(2);
    await admin.config('SET', 'maxclients', String(connections.length - subscribers.length));
    for (const id of subscribers) await admin.client('KILL', 'ID', id);
    await until(async () => !(await readyz(g2!)).body.cluster?.connected && !(await readyz(g3!)).body.cluster?.connected, 'g2 and g3 without their subscription');

    // Revoked on g1: the announcement reaches neither g2 nor g3.
    expect(await revokeLink(g1!, workspaceId, token, editor.id)).toBe(204);
    te2!.insert(0, '<eve2 after>');
    te3!.insert(0, '<eve3 after>');
    const closedWith = (c: typeof eve2) => (c.status.kind === 'closed' ? c.status.code : null);
    await until(() => [eve2, eve3, idle3].every((c) => c.status.kind === 'closed'), 'the revoked tabs closed on g2 and g3 while their subscriptions are down');
    expect([eve2, eve3, idle3].map(closedWith)).toEqual([CloseCode.LinkRevoked, CloseCode.LinkRevoked, CloseCode.LinkRevoked]);

    // Once back, g2 and g3 publish in order what they store: Bob's and Carol's edits reaching
    // Alice come after anything g2 and g3 had taken from the revoked tabs.
    await admin.config('SET', 'maxclients', '10000');
    tb!.insert(0, '<bob after>');
    tc!.insert(0, '<carol after>');
    await until(() => ta!.toString().includes('<bob after>') && ta!.toString().includes('<carol after>'), "Bob's and Carol's later edits on g1", () => ta!.toString().slice(0, 300));
    for (const text of [ta!, tb!, tc!]) expect(text.toString()).not.toMatch(/<eve[23] after>/);
    // And the database holds none of it: a new gateway loads what Alice sees.
    const fresh = await cluster.start();
    const reader = client(() => fresh, workspaceId, token);
    const loaded = await openFile(reader, 'src/format.ts');
    expect(loaded.toString()).toContain('<eve2 before>');
    expect(loaded.toString()).not.toMatch(/<eve[23] after>/);
    for (const c of [alice, bob, carol, eve2, eve3, idle3, reader]) c.destroy();
  }, 120_000);

  it('a gateway frozen past the liveness timeout learns it was taken for gone: its turns end failed there too and write nothing more', async () => {
    // About 19 s of answer: still streaming when g1 freezes, and long after it resumes.
    const lines = 200;
    model.respondWith({ text: Array.from({ length: lines }, (_, i) => `  frozenLine${i}();\n`).join(''), tokensPerSecond: 40, chunkChars: 5 });
    const cluster = newCluster();
    const [g1, g2] = await Promise.all([cluster.start(), cluster.start()]);
    const { workspaceId, token } = await createWorkspace(g1!, 'Frozen', 'demo');
    const alice = client(() => g1!, workspaceId, token);
    const bob = client(() => g2!, workspaceId, token);
    const [ta, tb] = await Promise.all([alice, bob].map((c) => openFile(c, 'src/format.ts')));
    const turns = new Map<FlintClient, TurnInfo[]>();
    for (const c of [alice, bob]) c.onTurn((turn) => turns.set(c, [...(turns.get(c) ?? []), turn]));
    const end = ta!.length;
    const prompted = await alice.prompt({ fileId: fileIdAt(alice, 'src/format.ts'), anchor: end - 30, head: end, instruction: 'rewrite' });
    expect(prompted.ok, JSON.stringify(prompted)).toBe(true);
    // And a thread turn, also on g1, answering with the same text.
    const [threadA, threadB] = [alice, bob].map((c) => c.openThread());
    await Promise.all([threadA!, threadB!].map((t) => t.whenSynced()));
    const sent = await alice.threadSend({ text: 'Explain the project.' });
    expect(sent.ok, JSON.stringify(sent)).toBe(true);
    const threadTurnId = sent.ok ? sent.turnId : '';
    const answerOn = (t: typeof threadB) => readThread(t!.doc).messages.filter((m) => m.kind === 'assistant' && m.turnId === threadTurnId).map((m) => m.text).join('');
    await until(() => tb!.toString().includes('frozenLine2') && answerOn(threadB).includes('frozenLine2'), 'both turns on g1 writing to g2');

    process.kill(g1!.child.pid!, 'SIGSTOP');
    const failedOn = (c: FlintClient) => turns.get(c)?.find((t) => t.status === 'failed');
    await until(() => failedOn(bob) !== undefined, 'g2 taking g1 for gone and ending its turn', undefined, 30_000);
    const lastLine = (text: string) => Math.max(-1, ...[...text.matchAll(/frozenLine(\d+)/g)].map((m) => Number(m[1])));
    const threadTurn = (t: typeof threadB) => readThread(t!.doc).turns.find((turn) => turn.turnId === threadTurnId);
    await until(() => threadTurn(threadB)?.status === 'failed', 'g2 ending the thread turn of g1');
    const shownAtFailure = lastLine(tb!.toString());
    const answeredAtFailure = lastLine(answerOn(threadB));
    process.kill(g1!.child.pid!, 'SIGCONT');

    // g1 finds it was taken for gone: the turn ends there too, and g1 rejoins.
    const ended = () => turns.get(alice)?.find((t) => t.status !== 'streaming');
    await until(() => ended() !== undefined, 'the turn ending on g1', () => JSON.stringify(turns.get(alice)?.map((t) => t.status)), 30_000);
    expect(ended()).toMatchObject({ status: 'failed', error: { message: expect.stringMatching(/stopped answering the others/) } });
    const gateways = async (g: GatewayProcess) => Number(/flint_cluster_gateways (\d+)/.exec(await (await fetch(`${g.url}/metrics`)).text())?.[1]);
    await until(async () => (await gateways(g2!)) === 2 && (await gateways(g1!)) === 2, 'g1 back in the cluster');
    // Edits cross again both ways, and the agent wrote nothing after g2 showed its turn failed
    // (at most the flush it had applied as it froze, published once it resumed).
    ta!.insert(0, '// alice after\n');
    tb!.insert(0, '// bob after\n');
    await until(() => ta!.toString() === tb!.toString() && ta!.toString().includes('bob after') && tb!.toString().includes('alice after'), 'g1 and g2 converging');
    expect(lastLine(tb!.toString())).toBeLessThanOrEqual(shownAtFailure + 1);
    expect(tb!.toString()).not.toContain(`frozenLine${lines - 1}`);
    // The thread turn too: failed on both, its answer no longer than when g2 ended it.
    await until(() => threadTurn(threadA)?.status === 'failed' && answerOn(threadA) === answerOn(threadB), 'the thread agreeing on g1 and g2');
    expect(lastLine(answerOn(threadB))).toBeLessThanOrEqual(answeredAtFailure + 1);
    for (const c of [alice, bob]) c.destroy();
  }, 120_000);

  it('/readyz per dependency: 503 while Redis is paused (200, degraded, when Redis is optional) and while PostgreSQL is stalled or stopped; /healthz names the gateway throughout', async () => {
    const database = await startPostgres(); // this test's own: it is stopped
    try {
      const cluster = newCluster(database);
      const [g1, g2] = await Promise.all([cluster.start(), cluster.start()]);
      expect(await readyz(g1!)).toMatchObject({ status: 200, body: { ready: true, degraded: [], store: { ok: true }, cluster: { connected: true } } });

      // Redis paused (every client, 3 s): no edit crosses, so no gateway is ready to take a tab —
      // unless none is, which is when the balancer asks with Redis optional.
      await admin.call('CLIENT', 'PAUSE', '3000', 'ALL');
      const [paused, alone] = await Promise.all([readyz(g1!), readyz(g2!, '?redis=optional')]);
      expect(paused).toMatchObject({ status: 503, body: { ready: false, degraded: ['redis'], store: { ok: true }, cluster: { connected: false } } });
      expect(alone).toMatchObject({ status: 200, body: { ready: true, degraded: ['redis'] } });
      await until(async () => (await readyz(g1!)).status === 200, 'g1 ready once Redis answers again');

      // PostgreSQL stalled: a new tab could not have its link checked.
      // Each PostgreSQL backend is a process group of its own: stop the server and every backend.
      const postgresProcesses = [database.pid, ...spawnSync('pgrep', ['-P', String(database.pid)], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).map(Number)];
      for (const pid of postgresProcesses) process.kill(pid, 'SIGSTOP');
      try {
        expect(await readyz(g1!, '?redis=optional')).toMatchObject({ status: 503, body: { ready: false, store: { ok: false }, cluster: { connected: true } } });
        const health = await fetch(`${g1!.url}/healthz`);
        expect({ status: health.status, body: await health.json() }).toMatchObject({ status: 200, body: { ok: true, gateway: g1!.id } });
      } finally {
        for (const pid of postgresProcesses) process.kill(pid, 'SIGCONT');
      }
      await until(async () => (await readyz(g1!)).status === 200, 'g1 ready once PostgreSQL answers again');

      // PostgreSQL stopped.
      await database.stop();
      expect(await readyz(g2!)).toMatchObject({ status: 503, body: { ready: false, store: { ok: false } } });
    } finally {
      await database.stop();
    }
  }, 120_000);
});
