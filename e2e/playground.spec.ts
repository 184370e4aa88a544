/**
 * Issue 37: playground mode and the front page. A visitor opens `/` of a playground (its own
 * gateway process, `--playground demo`) and lands in a fresh workspace of their own as its
 * owner, edits, and shares it with a second browser; a second visitor gets another workspace.
 * In normal mode (the e2e server), the front page makes a new workspace or opens the demo, and
 * remembers both.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Browser, type Page } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { createDemoWorkspace, openFile, openWorkspace, screenshotDir, shareLink, typeAtTop } from './helpers';
import { spawnGateway, stopGateway, type SpawnedGateway } from './spawnGateway';

let scratch: string;
let playground: SpawnedGateway;

test.beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'flint-playground-e2e-'));
  playground = await spawnGateway(['--playground', 'demo'], { FLINT_DATA_DIR: join(scratch, 'data') }, /Flint playground is running at (http:\/\/\S+)/);
});

test.afterAll(async () => {
  await stopGateway(playground.child);
  rmSync(scratch, { recursive: true, force: true });
});

async function visitor(browser: Browser, name: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await page.addInitScript((displayName) => {
    localStorage.setItem('flint.displayName', displayName);
    localStorage.setItem('flint.autocomplete', 'off');
  }, name);
  return page;
}

test('a visitor of a playground gets a workspace of their own, edits it and shares it; the next visitor gets another', async ({ browser }) => {
  const alice = await visitor(browser, 'Alice');
  await alice.goto(playground.url.href);
  await expect(alice).toHaveURL(/\/w\/[\w-]+#token=/);
  await expect(alice.getByTestId('status-connection')).toContainText('Connected');
  await expect(alice.getByTestId('workspace-name')).toHaveText('Tally (playground)');
  await expect(alice.getByTestId('playground-reset')).toBeVisible();
  const aliceWorkspace = new URL(alice.url()).pathname;

  await openFile(alice, 'src/format.ts');
  await typeAtTop(alice, '// Alice was here');
  const editorLink = await shareLink(alice, 'editor');

  const bob = await visitor(browser, 'Bob');
  await bob.goto(new URL(editorLink, playground.url).href);
  await expect(bob.getByTestId('status-connection')).toContainText('Connected');
  await openFile(bob, 'src/format.ts');
  await expect(bob.locator('[data-testid="editor"] .view-lines')).toContainText('// Alice was here');
  // Only the owner resets.
  await expect(bob.getByTestId('playground-reset')).toHaveCount(0);
  await alice.screenshot({ path: `${screenshotDir}/playground-visitor.png` });

  // Carol opens the front door too: a workspace of her own, without Alice's edit.
  const carol = await visitor(browser, 'Carol');
  await carol.goto(playground.url.href);
  await expect(carol).toHaveURL(/\/w\/[\w-]+#token=/);
  expect(new URL(carol.url()).pathname).not.toBe(aliceWorkspace);
  await expect(carol.getByTestId('status-connection')).toContainText('Connected');
  await openFile(carol, 'src/format.ts');
  await expect(carol.locator('[data-testid="editor"] .view-lines')).toContainText("import type { Task } from './model/task';");
  await expect(carol.locator('[data-testid="editor"] .view-lines')).not.toContainText('Alice was here');

  // Alice resets hers to the template (two clicks): Bob's tab, still connected, sees the file as the template has it.
  await alice.getByTestId('playground-reset').click();
  await alice.getByTestId('playground-reset').click();
  await openFile(bob, 'src/format.ts');
  await expect(bob.locator('[data-testid="editor"] .view-lines')).not.toContainText('Alice was here');
  await expect(bob.getByTestId('status-connection')).toContainText('Connected');
});

test('the front page makes a new workspace or opens the demo, and lists both as this browser opened them', async ({ page }) => {
  await page.addInitScript(() => localStorage.setItem('flint.displayName', 'Dana'));
  await page.goto('/');
  await expect(page.getByTestId('open-demo-button')).toBeVisible();
  await page.screenshot({ path: `${screenshotDir}/front-page.png` });

  await page.getByTestId('open-demo-button').click();
  await expect(page.getByTestId('status-connection')).toContainText('Connected');
  await expect(page.getByTestId('workspace-name')).toHaveText('Tally (demo)');
  await expect(page.locator('[data-testid="tree-item"][data-path="src/model/task.ts"]')).toBeVisible();

  await page.goto('/');
  await page.getByTestId('workspace-name-input').fill('Scratch');
  await page.getByTestId('new-workspace-button').click();
  await expect(page.getByTestId('status-connection')).toContainText('Connected');
  await expect(page.getByTestId('workspace-name')).toHaveText('Scratch');

  await page.goto('/');
  const recent = page.getByTestId('recent-workspace');
  await expect(recent).toHaveCount(2);
  await expect(recent.first()).toHaveText('Scratch');
  await expect(recent.nth(1)).toHaveText('Tally (demo)');
  await recent.nth(1).click();
  await expect(page.getByTestId('workspace-name')).toHaveText('Tally (demo)');
});

test('the owner records a workspace and downloads the recording', async ({ page, request }) => {
  await openWorkspace(page, await createDemoWorkspace(request), 'Erin');
  await page.getByTestId('record-button').click();
  await expect(page.getByTestId('record-button')).toHaveAttribute('aria-pressed', 'true');
  await openFile(page, 'src/index.ts');
  await typeAtTop(page, '// recorded');
  const download = page.waitForEvent('download');
  await page.getByTestId('record-button').click();
  const file = await (await download).path();
  const lines = readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(lines[0]).toMatchObject({ format: 'flint-recording', version: 1 });
  // Document updates and cursors (the awareness channel), nothing else.
  expect(lines.slice(1).every((frame) => frame.ch === 'update' || frame.ch === 'awareness')).toBe(true);
  expect(lines.slice(1).some((frame) => frame.ch === 'update')).toBe(true);
  expect(lines.length).toBeGreaterThan(4);
  await expect(page.getByTestId('record-button')).toHaveAttribute('aria-pressed', 'false');
});
