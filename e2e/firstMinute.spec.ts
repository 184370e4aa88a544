/**
 * Issue 37, the first minute without a model: a fresh gateway with no provider (its own process,
 * FLINT_PROVIDER=embedded, as `npm start` on a new machine) shows the connect step instead of
 * free-running the bundled model, plays the demo's scripted turn into two browsers (agent's
 * cursor, review), and once the owner connects a (loopback fake) provider, the thread answers
 * through it. The collaborator never receives the key.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Browser, type Page } from '@playwright/test';
import { FakeOpenAIServer } from '@flint/test-kit';
import { openFile, openWorkspace, screenshotDir } from './helpers';
import { spawnGateway, stopGateway, type SpawnedGateway } from './spawnGateway';

const key = 'sk-e2e-first-minute-0123456789';

interface Running extends SpawnedGateway {
  origin: string;
  workspaceId: string;
  ownerToken: string;
  ownerLink: string;
}

/** main.ts with no provider configured; resolves with the demo's owner link it prints. */
async function startFreshGateway(dataDir: string): Promise<Running> {
  const gateway = await spawnGateway([], { FLINT_DATA_DIR: dataDir }, /\(owner link\): (http:\/\/\S+\/w\/[\w-]+#token=[\w-]+)/);
  const [, workspaceId] = /\/w\/([\w-]+)/.exec(gateway.url.pathname)!;
  return { ...gateway, origin: gateway.url.origin, workspaceId: workspaceId!, ownerToken: gateway.url.hash.replace('#token=', ''), ownerLink: gateway.url.href };
}

async function person(browser: Browser, link: string, name: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await page.addInitScript(() => localStorage.setItem('flint.autocomplete', 'off'));
  await openWorkspace(page, link, name);
  return page;
}

async function openPanel(page: Page): Promise<void> {
  if ((await page.getByTestId('agent-panel').count()) === 0) await page.keyboard.press('Control+l');
  await expect(page.getByTestId('agent-panel')).toHaveAttribute('data-synced', 'true');
}

/** The labels of the remote cursors in the editor (y-monaco draws a cursor's name in its head's ::after). */
function cursorLabels(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...(document.querySelector('[data-testid="editor"]')?.querySelectorAll('[class*="yRemoteSelectionHead-"]') ?? [])].map((head) => getComputedStyle(head, '::after').content),
  );
}

let scratch: string;
let gateway: Running;
let fake: FakeOpenAIServer;

test.beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'flint-first-minute-'));
  fake = await FakeOpenAIServer.start();
  gateway = await startFreshGateway(join(scratch, 'data'));
});

test.afterAll(async () => {
  await stopGateway(gateway.child);
  await fake.close();
  rmSync(scratch, { recursive: true, force: true });
});

test('a fresh start with no provider offers the connect step and a replay; the replay streams into two browsers; a connected model answers', async ({ browser }) => {
  const res = await fetch(`${gateway.origin}/api/workspaces/${gateway.workspaceId}/links`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${gateway.ownerToken}` },
    body: JSON.stringify({ role: 'editor' }),
  });
  expect(res.status).toBe(201);
  const editorLink = ((await res.json()) as { url: string }).url;

  const alice = await person(browser, gateway.ownerLink, 'Alice');
  const bob = await person(browser, editorLink, 'Bob');
  await openPanel(alice);
  await openPanel(bob);

  // The owner gets the one-step form; the editor is told the owner can connect one. Neither gets a prompt box for the bundled model.
  await expect(alice.getByTestId('first-minute')).toBeVisible();
  await expect(alice.getByTestId('connect-model-form')).toBeVisible();
  await expect(bob.getByTestId('first-minute')).toContainText("The workspace's owner can connect one");
  await expect(bob.getByTestId('connect-model-form')).toHaveCount(0);
  for (const page of [alice, bob]) await expect(page.getByTestId('thread-input')).toHaveCount(0);
  await alice.screenshot({ path: `${screenshotDir}/first-minute-connect.png` });

  // A wrong endpoint is refused with what happened, and nothing is kept.
  await alice.getByTestId('connect-model-name').fill('fake-live');
  await alice.getByTestId('connect-base-url').fill('http://127.0.0.1:9/v1');
  await alice.getByTestId('connect-model-submit').click();
  await expect(alice.getByTestId('connect-model-error')).toContainText('127.0.0.1:9');

  // Bob plays the scripted turn; it streams into both browsers under the agent's cursor.
  await openFile(bob, 'src/model/task.ts');
  await bob.getByTestId('play-demo-replay').click();
  for (const page of [alice, bob]) {
    await expect(page.locator('[data-testid="thread-message"][data-kind="user"]')).toContainText('Give tasks an optional due date');
    await expect(page.getByTestId('agent-panel')).toContainText('a replay of a recorded agent turn, not a live model');
    await expect(page.getByTestId('agent-panel')).toContainText('replay · scripted demo turn');
  }
  await expect.poll(async () => (await cursorLabels(bob)).some((label) => label.includes('replay')), { intervals: [50], timeout: 20_000 }).toBe(true);
  await expect(bob.locator('[data-testid="editor"] .view-lines')).toContainText('dueDate?: Date;', { timeout: 20_000 });
  for (const page of [alice, bob]) await expect(page.getByTestId('thread-turn').last()).toHaveAttribute('data-status', 'done', { timeout: 30_000 });
  await expect(alice.locator('[data-testid="thread-file"][data-path="src/format.ts"]')).toBeVisible();
  await expect(alice.locator('[data-testid="thread-file"][data-path="src/model/task.ts"]')).toBeVisible();
  await bob.screenshot({ path: `${screenshotDir}/first-minute-replayed.png` });

  // The usual review: Alice rejects the turn, and Bob's editor is back to the seed.
  await alice.getByTestId('thread-turn-reject').last().click();
  await expect(bob.locator('[data-testid="editor"] .view-lines')).not.toContainText('dueDate', { timeout: 15_000 });

  // Alice connects the (loopback fake) provider; the thread then answers through it.
  fake.respondWith({ text: 'Hello from the connected model.' });
  await alice.getByTestId('connect-model-open').click();
  await alice.getByTestId('connect-kind-openai').click();
  await alice.getByTestId('connect-base-url').fill(fake.baseUrl);
  await alice.getByTestId('connect-api-key').fill(key);
  await alice.getByTestId('connect-model-name').fill('fake-live');
  await alice.getByTestId('connect-model-submit').click();
  await expect(alice.getByTestId('connected-model-name')).toHaveText('fake-live');
  await alice.getByTestId('connected-model-manage').click();
  await expect(alice.getByTestId('connected-model-key')).toHaveText('sk-…6789');
  await alice.screenshot({ path: `${screenshotDir}/first-minute-connected.png` });

  const input = alice.getByTestId('thread-input');
  await input.fill('Say hello.');
  await input.press('Enter');
  for (const page of [alice, bob]) await expect(page.locator('[data-testid="thread-message"][data-kind="assistant"]').last()).toContainText('Hello from the connected model.');
  expect(fake.requests.at(-1)!.headers.authorization).toBe(`Bearer ${key}`);
  // Bob learns the model's name (a new turn named it) and never the key.
  await expect(bob.getByTestId('connected-model-name')).toHaveText('fake-live');
  await expect(bob.getByTestId('connected-model-manage')).toHaveCount(0);
  expect(await bob.content()).not.toContain(key);
});
