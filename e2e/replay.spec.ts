/**
 * Issue 37, replay: the owner records an agent turn on the demo project and downloads it; a
 * presenter uploads the `.flintrec` on the front page and gets a read-only replay workspace with a
 * playback bar; two viewers open its viewer link and follow the presenter. At 2× the turn's text
 * reaches both viewers' editors and panels, the timeline moves, and pause stops it.
 */
import { readFileSync } from 'node:fs';
import { expect, test, type APIRequestContext, type Browser, type Page } from '@playwright/test';
import { createDemoWorkspace, editorText, openFile, openWorkspace, screenshotDir } from './helpers';

const scriptOnceUrl = `http://127.0.0.1:${Number(process.env.E2E_PORT ?? 4173) + 1}/script-once`;

const dueDatePatch = `*** Begin Patch
*** Update File: src/format.ts
@@
 const marks = { high: '!!', normal: ' !', low: '  ' } as const;
 
+/** A due date as the list shows it: the day, in ISO form. */
+function formatDue(due: Date | undefined): string {
+  return due ? \` (due \${due.toISOString().slice(0, 10)})\` : '';
+}
+
 export function formatTask(task: Task): string {
*** End Patch
`;

async function scriptAnswers(request: APIRequestContext): Promise<void> {
  const res = await request.post(scriptOnceUrl, {
    data: [
      { text: 'I will add a `formatDue` helper to the list.', chunkChars: 3, tokensPerSecond: 20, toolCalls: [{ name: 'apply_patch', arguments: JSON.stringify({ patch: dueDatePatch }) }] },
      { text: 'Done: `formatDue` prints a due date after the title.', chunkChars: 3, tokensPerSecond: 40 },
    ],
  });
  expect(res.status()).toBe(204);
}

async function person(browser: Browser, link: string, name: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await page.addInitScript(() => localStorage.setItem('flint.autocomplete', 'off'));
  await openWorkspace(page, link, name);
  return page;
}

const at = async (page: Page) => Number(await page.getByTestId('replay-bar').getAttribute('data-at'));

test('a presenter replays a recorded agent turn at 2× while two viewers follow; pause stops it', async ({ browser, request }) => {
  test.setTimeout(120_000);
  // Record: the owner records while the agent edits src/format.ts.
  const owner = await person(browser, await createDemoWorkspace(request), 'Alice');
  await openFile(owner, 'src/format.ts');
  await owner.getByTestId('record-button').click();
  await expect(owner.getByTestId('record-button')).toHaveAttribute('aria-pressed', 'true');
  await owner.keyboard.press('Control+l');
  await expect(owner.getByTestId('agent-panel')).toHaveAttribute('data-synced', 'true');
  await scriptAnswers(request);
  await owner.getByTestId('thread-input').fill('Show due dates in the list.');
  await owner.getByTestId('thread-input').press('Enter');
  await expect(owner.getByTestId('thread-turn')).toHaveAttribute('data-status', 'done', { timeout: 30_000 });
  const download = owner.waitForEvent('download');
  await owner.getByTestId('record-button').click();
  const file = await (await download).path();
  const lines = readFileSync(file, 'utf8').trim().split('\n');
  expect(lines.some((line) => line.includes('"ch":"awareness"'))).toBe(true);

  // Present: the front page turns the file into a replay workspace; this tab holds its control.
  const presenter = await (await browser.newContext()).newPage();
  await presenter.addInitScript(() => localStorage.setItem('flint.displayName', 'Presenter'));
  await presenter.goto('/');
  await presenter.getByTestId('replay-file-input').setInputFiles(file);
  await expect(presenter).toHaveURL(/\/w\/[\w-]+#token=[\w-]+&control=/);
  await expect(presenter.getByTestId('status-connection')).toContainText('Connected');
  await expect(presenter.getByTestId('replay-play')).toBeVisible();
  await expect(presenter.getByTestId('role-badge')).toContainText(/view/i);
  const url = new URL(presenter.url());
  const viewerLink = `${url.pathname}#token=${new URLSearchParams(url.hash.slice(1)).get('token')}`;
  await presenter.screenshot({ path: `${screenshotDir}/replay-presenter-start.png` });
  await openFile(presenter, 'src/format.ts');

  const viewers = [await person(browser, viewerLink, 'Vera'), await person(browser, viewerLink, 'Victor')];
  for (const viewer of viewers) {
    await expect(viewer.getByTestId('replay-bar')).toBeVisible();
    await expect(viewer.getByTestId('replay-play')).toHaveCount(0); // no control without the secret
    await viewer.locator('[data-testid="presence-item"][data-name="Presenter"]').click();
    await expect(viewer.locator('[data-testid="tab"][data-path="src/format.ts"]')).toHaveAttribute('aria-selected', 'true');
    await expect(editorText(viewer)).not.toContainText('function formatDue(');
  }

  // 2×, play; pause once the replay has moved: the timeline stops, in every tab.
  await presenter.getByTestId('replay-speed-2').click();
  await presenter.getByTestId('replay-play').click();
  await expect.poll(() => at(presenter), { timeout: 10_000, intervals: [100] }).toBeGreaterThan(300);
  await presenter.getByTestId('replay-play').click(); // pause
  await expect(presenter.getByTestId('replay-bar')).toHaveAttribute('data-playing', 'false');
  await expect.poll(() => viewers[1]!.getByTestId('replay-bar').getAttribute('data-playing')).toBe('false');
  const pausedAt = await at(presenter);
  const durationMs = Number(await presenter.getByTestId('replay-timeline').getAttribute('max'));
  expect(pausedAt, `paused at ${pausedAt} of ${durationMs} ms`).toBeLessThan(durationMs);
  await viewers[1]!.waitForTimeout(1200);
  expect(await at(presenter)).toBe(pausedAt);
  expect(await at(viewers[1]!)).toBe(pausedAt);
  await viewers[0]!.screenshot({ path: `${screenshotDir}/replay-paused-viewer.png` });

  // Play on: the agent's edit reaches both viewers' editors, its words their panels.
  await presenter.getByTestId('replay-play').click();
  for (const viewer of viewers) await expect(editorText(viewer)).toContainText('function formatDue(', { timeout: 30_000 });
  for (const viewer of viewers) {
    await viewer.keyboard.press('Control+l');
    await expect(viewer.locator('[data-testid="thread-message"][data-kind="assistant"]').last()).toContainText('prints a due date', { timeout: 15_000 });
  }
  await expect.poll(() => at(viewers[1]!)).toBeGreaterThan(pausedAt);
  await presenter.screenshot({ path: `${screenshotDir}/replay-presenter.png` });
  await viewers[1]!.screenshot({ path: `${screenshotDir}/replay-viewer.png` });
});
