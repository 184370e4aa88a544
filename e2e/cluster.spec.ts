import { expect, test } from '@playwright/test';
import { startPostgres, startRedis, type RunningService } from '@flint/test-kit';
import { createWorkspace, GatewayProcesses, type GatewayProcess } from '@flint/gateway/testing';
import { editorText, openFile, openWorkspace, screenshotDir, typeAtTop } from './helpers';

/**
 * The IDE served by two gateways of a cluster (issue 25): Alice's page on one, Bob's on the
 * other, as a balancer would spread them. What one types the other sees, with presence.
 */
let redis: RunningService;
let postgres: RunningService;
let cluster: GatewayProcesses;
let gateways: GatewayProcess[];

test.beforeAll(async () => {
  redis = await startRedis();
  postgres = await startPostgres();
  cluster = new GatewayProcesses({ FLINT_DATABASE_URL: postgres.url, FLINT_REDIS_URL: redis.url, FLINT_WEB_ROOT: 'apps/web/dist' });
  gateways = await Promise.all([cluster.start(), cluster.start()]);
});

test.afterAll(async () => {
  await cluster?.stopAll();
  await redis?.stop();
  await postgres?.stop();
});

test('two people on two gateways of a cluster edit one file together and see each other', async ({ browser }) => {
  const [g1, g2] = gateways as [GatewayProcess, GatewayProcess];
  const { workspaceId, token } = await createWorkspace(g1, 'Cluster', 'demo');
  const link = `/w/${workspaceId}#token=${token}`;
  const alice = await (await browser.newContext({ baseURL: g1.url })).newPage();
  const bob = await (await browser.newContext({ baseURL: g2.url })).newPage();
  await openWorkspace(alice, link, 'Alice');
  await openWorkspace(bob, link, 'Bob');
  await openFile(alice, 'src/index.ts');
  await openFile(bob, 'src/index.ts');
  await typeAtTop(alice, '// FROM_GATEWAY_ONE');
  await expect(editorText(bob)).toContainText('FROM_GATEWAY_ONE');
  await typeAtTop(bob, '// FROM_GATEWAY_TWO');
  await expect(editorText(alice)).toContainText('FROM_GATEWAY_TWO');
  await expect(alice.locator('[data-testid="presence-item"][data-name="Bob"]')).toBeVisible();
  await expect(bob.locator('[data-testid="presence-item"][data-name="Alice"]')).toBeVisible();
  await expect(alice.locator('[class*="yRemoteSelectionHead-"]')).toHaveCount(1);
  // Each page is served by, and connected to, its own gateway.
  for (const g of [g1, g2]) {
    const health = (await (await fetch(`${g.url}/healthz`)).json()) as { gateway: string; sessions: number };
    expect(health).toMatchObject({ gateway: g.id, sessions: 1 });
  }
  await alice.screenshot({ path: `${screenshotDir}/cluster-alice-gateway1.png` });
  await bob.screenshot({ path: `${screenshotDir}/cluster-bob-gateway2.png` });
});
