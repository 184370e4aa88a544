import { CloseCode } from '@flint/protocol';
import { createDatabase, FakeOpenAIServer, startPostgres, startRedis, type RunningService } from '@flint/test-kit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, openFile, revokeLink, shareLink, until } from './clusterTesting';
import { createWorkspace, GatewayProcesses, type GatewayProcess } from './gatewayProcesses';

/**
 * Real gateway processes on one PostgreSQL and one Redis, under the faults a cluster meets:
 * a subscription that drops as a revocation is announced (issue 31).
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

function newCluster(): GatewayProcesses {
  const name = `faults${databases++}`;
  const cluster = new GatewayProcesses({
    FLINT_DATABASE_URL: createDatabase(postgres, name),
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

async function readyz(g: GatewayProcess): Promise<{ status: number; body: { ready: boolean; cluster?: { connected: boolean } } }> {
  const res = await fetch(`${g.url}/readyz`);
  return { status: res.status, body: (await res.json()) as { ready: boolean; cluster?: { connected: boolean } } };
}

describe('a cluster under faults', () => {
  it("a link revoked while the other gateways' subscriptions are down is closed there too, and nothing its tabs send after the revocation is stored", async () => {
    const cluster = newCluster();
    const [g1, g2, g3] = await Promise.all([cluster.start(), cluster.start(), cluster.start()]);
    const { workspaceId, token } = await createWorkspace(g1!, 'Lost revocation', 'demo');
    const editor = await shareLink(g1!, workspaceId, token, 'editor');
    const alice = client(() => g1!, workspaceId, token);
    const bob = client(() => g2!, workspaceId, token);
    const carol = client(() => g3!, workspaceId, token);
    const eve2 = client(() => g2!, workspaceId, editor.token);
    const eve3 = client(() => g3!, workspaceId, editor.token);
    const idle3 = client(() => g3!, workspaceId, editor.token); // sends nothing after it opens
    const [ta, tb, tc, te2, te3] = await Promise.all([alice, bob, carol, eve2, eve3, idle3].map((c) => openFile(c, 'src/format.ts')));
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
});
