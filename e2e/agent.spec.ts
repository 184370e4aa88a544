import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { createDemoWorkspace, editorText, openFile, openWorkspace, screenshotDir, shareLink } from './helpers';

const controlUrl = `http://127.0.0.1:${Number(process.env.E2E_PORT ?? 4173) + 1}/script`;

/** Scripts the loopback fake provider the e2e gateway's fast route points at. */
async function scriptModel(request: APIRequestContext, script: { text: string; tokensPerSecond: number; chunkChars: number }) {
  const res = await request.post(controlUrl, { data: script });
  expect(res.status()).toBe(204);
}

/** Puts the caret on the line containing `text`. */
async function caretOnLine(page: Page, text: string): Promise<void> {
  await page.locator('[data-testid="editor"] .view-line', { hasText: text }).first().click();
  await page.keyboard.press('End');
}

async function promptAgent(page: Page, instruction: string): Promise<void> {
  await page.keyboard.press('Control+k');
  const input = page.getByTestId('inline-prompt');
  await expect(input).toBeVisible();
  await input.fill(instruction);
  await input.press('Enter');
}

test('Ctrl-K streams the model\'s rewrite into the file for everyone; reject restores the original', async ({ browser, request }) => {
  const ownerLink = await createDemoWorkspace(request);
  const alice = await (await browser.newContext()).newPage();
  await openWorkspace(alice, ownerLink, 'Alice');
  const editorLink = await shareLink(alice, 'editor');
  const bob = await (await browser.newContext()).newPage();
  await openWorkspace(bob, editorLink, 'Bob');
  await openFile(alice, 'src/format.ts');
  await openFile(bob, 'src/format.ts');

  await scriptModel(request, { text: "  if (tasks.length === 0) return 'All done, enjoy the day!';", tokensPerSecond: 25, chunkChars: 2 });
  await caretOnLine(alice, 'Nothing to do.');
  await promptAgent(alice, 'make the empty message friendlier');

  // Bob sees the agent's cursor while it writes, then the finished text.
  await expect(bob.locator('[class*="yRemoteSelectionHead-"]').first()).toBeVisible();
  await expect(bob.getByTestId('hud-status')).toContainText('streaming');
  await bob.screenshot({ path: `${screenshotDir}/agent-streaming-bob.png` });
  await expect(editorText(bob)).toContainText('All done, enjoy the day!');
  await expect(alice.getByTestId('hud-status')).toContainText('done');
  await expect(alice.getByTestId('hud-model')).toContainText('fake-spark');
  await expect(alice.getByTestId('hud-ttft')).toContainText(/\d/);
  await expect(bob.locator('.flint-inserted').first()).toBeVisible();
  // The replaced original stays visible, struck through, until someone reviews it.
  await expect(bob.locator('.flint-removed', { hasText: 'Nothing to do.' })).toBeVisible();
  await expect(bob.getByTestId('hunk-reject').first()).toBeVisible();
  await alice.screenshot({ path: `${screenshotDir}/agent-review-alice.png` });

  await bob.getByTestId('reject-all').click();
  await expect(editorText(alice)).toContainText("return 'Nothing to do.';");
  await expect(editorText(alice)).not.toContainText('All done');
  await expect(alice.getByTestId('hunk-reject')).toHaveCount(0);
});

test('Esc interrupts the stream: what was written stays for review, the rest of the original stays', async ({ browser, request }) => {
  const ownerLink = await createDemoWorkspace(request);
  const page = await (await browser.newContext()).newPage();
  // The editor, through the app's optional probe hook, to read its options.
  await page.addInitScript(() => {
    (window as unknown as { __FLINT_EDITOR_PROBE__: (e: unknown) => void }).__FLINT_EDITOR_PROBE__ = (e) => ((window as unknown as { __editor: unknown }).__editor = e);
  });
  const suggestDelay = () => page.evaluate(() => (window as unknown as { __editor: { getRawOptions(): { quickSuggestionsDelay?: number } } }).__editor.getRawOptions().quickSuggestionsDelay);
  await openWorkspace(page, ownerLink, 'Solo');
  await openFile(page, 'src/format.ts');
  await scriptModel(request, { text: '  // a long explanation that never ends\n'.repeat(40), tokensPerSecond: 10, chunkChars: 4 });
  await caretOnLine(page, 'Nothing to do.');
  await promptAgent(page, 'explain');
  await expect(editorText(page)).toContainText('a long');
  // While the agent writes into this file, as-you-type suggestions wait for a pause in typing.
  await expect.poll(suggestDelay).toBe(300);
  await page.locator('[data-testid="editor"] .view-lines').click();
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('hud-status')).toContainText('stopped');
  await expect.poll(suggestDelay).toBe(10);
  // Far fewer lines than the model would have written (40) made it into the file.
  await expect.poll(async () => ((await editorText(page).innerText()).match(/never ends/g) ?? []).length).toBeLessThan(10);
  await expect(editorText(page)).toContainText('formatList');
  await page.getByTestId('reject-all').click();
  await expect(editorText(page)).toContainText("return 'Nothing to do.';");
  await expect(editorText(page)).not.toContainText('a long');
});

test('a viewer watches the stream but cannot prompt or review', async ({ browser, request }) => {
  const ownerLink = await createDemoWorkspace(request);
  const owner = await (await browser.newContext()).newPage();
  await openWorkspace(owner, ownerLink, 'Owner');
  const viewerLink = await shareLink(owner, 'viewer');
  const viewer = await (await browser.newContext()).newPage();
  await openWorkspace(viewer, viewerLink, 'Vera');
  await openFile(owner, 'src/format.ts');
  await openFile(viewer, 'src/format.ts');

  await viewer.locator('[data-testid="editor"] .view-lines').click();
  await viewer.keyboard.press('Control+k');
  await expect(viewer.getByTestId('inline-prompt')).toHaveCount(0);

  await scriptModel(request, { text: "  if (tasks.length === 0) return 'Inbox zero';", tokensPerSecond: 100, chunkChars: 2 });
  await caretOnLine(owner, 'Nothing to do.');
  await promptAgent(owner, 'shorter');
  await expect(editorText(viewer)).toContainText('Inbox zero');
  await expect(viewer.getByTestId('hud-status')).toContainText('done');
  await expect(viewer.getByTestId('hunk-accept')).toHaveCount(0);
  await expect(viewer.getByTestId('reject-all')).toHaveCount(0);
  await expect(owner.getByTestId('hunk-accept').first()).toBeVisible();
  await viewer.screenshot({ path: `${screenshotDir}/agent-viewer.png` });
});

test('the review pill says what the changes do to TypeScript problems: a new error is one click away, a fixed one counts', async ({ page, request }) => {
  await openWorkspace(page, await createDemoWorkspace(request), 'Dana');
  await openFile(page, 'src/format.ts');
  const added = page.getByTestId('review-problems-added');

  // The rewrite returns a number where the function promises a string.
  await scriptModel(request, { text: '  if (tasks.length === 0) return 0;', tokensPerSecond: 200, chunkChars: 4 });
  await caretOnLine(page, 'Nothing to do.');
  await promptAgent(page, 'return a count instead');
  await expect(added).toContainText('1 new error');
  await expect(added).toHaveAttribute('title', /line 11: Type 'number' is not assignable to type 'string'/);
  await page.screenshot({ path: `${screenshotDir}/agent-review-problems.png` });
  // A line typed above moves the error down; the jump follows it.
  await caretOnLine(page, 'import type');
  await page.keyboard.press('Home');
  await page.keyboard.press('Enter');
  await added.click();
  await expect(page.getByTestId('status-cursor')).toContainText('Ln 12');
  await page.getByTestId('reject-all').click();
  await expect(added).toHaveCount(0);

  // A person breaks a line; the agent's rewrite of it fixes that and adds nothing.
  await caretOnLine(page, 'const marks');
  await page.keyboard.press('Enter');
  await page.keyboard.insertText('const label: string = 1;');
  await expect(page.locator('[data-testid="editor"] .squiggly-error')).toHaveCount(1);
  await scriptModel(request, { text: 'const label: string = String(1);', tokensPerSecond: 200, chunkChars: 4 });
  await promptAgent(page, 'fix the type');
  await expect(page.getByTestId('review-problems-fixed')).toContainText('1 fixed');
  await expect(added).toHaveCount(0);
  await page.screenshot({ path: `${screenshotDir}/agent-review-problems-fixed.png` });
  await page.getByTestId('accept-all').click();
  await expect(page.getByTestId('review-problems-fixed')).toHaveCount(0);
});
