import { expect, test, type Page } from '@playwright/test';
import { createDemoWorkspace, editorText, openFile, openWorkspace, screenshotDir, shareLink, watchedPage } from './helpers';

/** Issue 38, items 4 and 5: the command palette, search across files, collaborators apart. */

const pageErrors: string[] = [];
test.afterEach(() => {
  expect(pageErrors.splice(0)).toEqual([]);
});

async function runCommand(page: Page, text: string, id: string): Promise<void> {
  await page.keyboard.press('Control+Shift+P');
  const palette = page.getByTestId('command-palette');
  await expect(palette).toBeVisible();
  await page.keyboard.type(text);
  await expect(palette.locator('[data-testid="palette-command"]').first()).toHaveAttribute('data-command', id);
  await page.keyboard.press('Enter');
  await expect(palette).toHaveCount(0);
}

test('the command palette lists the app\'s commands with their keys and runs them, keyboard only', async ({ browser, request }) => {
  const page = await watchedPage(browser, pageErrors);
  await page.setViewportSize({ width: 1440, height: 900 });
  await openWorkspace(page, await createDemoWorkspace(request), 'Alice');

  await page.keyboard.press('Control+Shift+P');
  const palette = page.getByTestId('command-palette');
  await expect(palette).toBeVisible();
  await expect(palette.locator('[data-command="search"] .palette-key')).toHaveText('Ctrl+Shift+F');
  await expect(palette.locator('[data-command="quick-open"] .palette-key')).toHaveText('Ctrl+P');
  await page.screenshot({ path: `${screenshotDir}/palette-1440.png` });
  await page.setViewportSize({ width: 760, height: 700 });
  await page.keyboard.type('agnt');
  await expect(palette.locator('[data-testid="palette-command"]').first()).toHaveAttribute('data-command', 'agent-panel');
  await page.screenshot({ path: `${screenshotDir}/palette-760.png` });
  await page.keyboard.press('Escape');
  await expect(palette).toHaveCount(0);
  await page.setViewportSize({ width: 1440, height: 900 });

  await runCommand(page, 'go to file', 'quick-open');
  await expect(page.getByTestId('quick-open')).toBeVisible();
  await page.keyboard.type('format');
  await page.keyboard.press('Enter');
  await expect(page.locator('[data-testid="tab"][data-path="src/format.ts"]')).toHaveAttribute('aria-selected', 'true');

  await runCommand(page, 'search across', 'search');
  await expect(page.getByTestId('search-input')).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('search-panel')).toHaveCount(0);

  await runCommand(page, 'open the agent', 'agent-panel');
  await expect(page.getByTestId('agent-panel')).toBeVisible();
  await runCommand(page, 'close the agent', 'agent-panel');
  await expect(page.getByTestId('agent-panel')).toHaveCount(0);

  await runCommand(page, 'hide the sidebar', 'sidebar');
  await expect(page.locator('nav[aria-label="Files"]')).toBeHidden();
  await page.keyboard.press('Control+b');
  await expect(page.locator('nav[aria-label="Files"]')).toBeVisible();

  await runCommand(page, 'share', 'share');
  await expect(page.getByTestId('share-dialog')).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('share-dialog')).toHaveCount(0);

  // Monaco's own commands stay behind F1; the palette opens them too.
  await runCommand(page, 'editor commands', 'editor-commands');
  await expect(page.locator('.quick-input-widget')).toBeVisible();
  await page.keyboard.press('Escape');
});

test('Ctrl+Shift+F finds text in files never opened and replaces across two files, live for a collaborator', async ({ browser, request }) => {
  const alice = await watchedPage(browser, pageErrors);
  await alice.setViewportSize({ width: 1440, height: 900 });
  await openWorkspace(alice, await createDemoWorkspace(request), 'Alice');
  const bob = await watchedPage(browser, pageErrors);
  await openWorkspace(bob, await shareLink(alice, 'editor'), 'Bob');
  await openFile(bob, 'src/index.ts');
  await expect(editorText(bob)).toContainText('new TaskStore()');

  await alice.locator('[data-testid="tree-item"][data-path="README.md"]').click();
  await alice.keyboard.press('Control+Shift+F');
  const panel = alice.getByTestId('search-panel');
  await expect(alice.getByTestId('search-input')).toBeFocused();
  await alice.keyboard.type('TaskStore');
  await expect(panel.getByTestId('search-summary')).toContainText(/\d+ results? in \d+ files?/);
  // Match case and whole word, from the keyboard (Alt+W is "whole word" here, not "close the tab").
  await alice.keyboard.press('Alt+C');
  await alice.keyboard.press('Alt+W');
  await expect(panel.getByTestId('search-matchCase')).toHaveAttribute('aria-pressed', 'true');
  await expect(panel.getByTestId('search-wholeWord')).toHaveAttribute('aria-pressed', 'true');
  await expect(alice.locator('[data-testid="tab"][data-path="README.md"]')).toBeVisible();
  await expect(panel.getByTestId('search-summary')).toHaveText('3 results in 2 files');
  await expect(panel.getByTestId('search-file')).toHaveCount(2);
  await expect(panel.locator('[data-testid="search-file"][data-path="src/index.ts"] [data-testid="search-match"]')).toHaveCount(2);
  await expect(panel.locator('[data-testid="search-file"][data-path="src/store/taskStore.ts"] [data-testid="search-match"]')).toHaveCount(1);
  // Neither file was opened in this tab.
  await expect(alice.locator('[data-testid="tab"][data-path="src/store/taskStore.ts"]')).toHaveCount(0);
  await alice.screenshot({ path: `${screenshotDir}/search-1440.png` });

  // Globs narrow it.
  await alice.getByTestId('search-exclude').fill('store');
  await expect(panel.getByTestId('search-summary')).toHaveText('2 results in 1 file');
  await alice.getByTestId('search-exclude').fill('');
  await expect(panel.getByTestId('search-summary')).toHaveText('3 results in 2 files');

  await alice.setViewportSize({ width: 760, height: 700 });
  await alice.screenshot({ path: `${screenshotDir}/search-760.png` });
  await alice.setViewportSize({ width: 1440, height: 900 });

  await alice.getByTestId('replace-input').fill('TodoStore');
  await alice.getByTestId('replace-all').click();
  await expect(panel.getByTestId('search-replaced')).toHaveText('Replaced 3 matches in 2 files.');
  await expect(panel.getByTestId('search-summary')).toContainText('No results.');
  // Bob had src/index.ts open: the replacement arrived live.
  await expect(editorText(bob)).toContainText('new TodoStore()');

  // One step takes it back in both files, for everyone; then again, for the rest of the journey.
  await panel.getByTestId('search-undo').click();
  await expect(panel.getByTestId('search-replaced')).toHaveText('Undid the replace in 2 files.');
  await expect(editorText(bob)).toContainText('new TaskStore()');
  await expect(panel.getByTestId('search-summary')).toContainText('3 results in 2 files');
  await panel.getByTestId('replace-all').click();
  await expect(panel.getByTestId('search-replaced')).toHaveText('Replaced 3 matches in 2 files.');
  await expect(editorText(bob)).toContainText('new TodoStore()');

  // A result opens its file at its line.
  await alice.getByTestId('search-input').fill('TodoStore');
  await panel.locator('[data-testid="search-file"][data-path="src/store/taskStore.ts"] [data-testid="search-match"]').click();
  await expect(alice.locator('[data-testid="tab"][data-path="src/store/taskStore.ts"]')).toHaveAttribute('aria-selected', 'true');
  await expect(editorText(alice)).toContainText('export class TodoStore');
});

test('two people who picked the same colour are drawn in different colours; a tab shows who is there by initials', async ({ browser, request }) => {
  const ownerLink = await createDemoWorkspace(request);
  const pages: Page[] = [];
  for (const name of ['Alice', 'Bob']) {
    const page = await watchedPage(browser, pageErrors);
    await page.addInitScript(() => localStorage.setItem('flint.color', '#6c9eff'));
    await openWorkspace(page, pages.length === 0 ? ownerLink : await shareLink(pages[0]!, 'editor'), name);
    await openFile(page, 'src/index.ts');
    pages.push(page);
  }
  const [alice, bob] = pages as [Page, Page];
  const colorOf = (page: Page, name: string) => page.locator(`[data-testid="presence-item"][data-name="${name}"] .avatar`).evaluate((el) => getComputedStyle(el).backgroundColor);
  await expect.poll(() => colorOf(bob, 'Alice')).toBe('rgb(108, 158, 255)');
  await expect.poll(() => colorOf(alice, 'Bob')).not.toBe('rgb(108, 158, 255)');
  const bobsColor = await colorOf(alice, 'Bob');
  const marker = alice.locator('[data-testid="tab"][data-path="src/index.ts"] [data-testid="tab-peer"]');
  await expect(marker).toHaveText('BO');
  expect(await marker.evaluate((el) => getComputedStyle(el).backgroundColor)).toBe(bobsColor);
  // Bob's cursor in Alice's editor is in Bob's colour too.
  await bob.locator('[data-testid="editor"] .view-lines').click();
  await expect(alice.locator('[class*="yRemoteSelectionHead-"]')).toHaveCount(1);
  expect(await alice.locator('[class*="yRemoteSelectionHead-"]').evaluate((el) => getComputedStyle(el).borderTopColor)).toBe(bobsColor);
  await alice.screenshot({ path: `${screenshotDir}/peer-colours.png` });

  // Following someone is a command too.
  await alice.keyboard.press('Control+Shift+P');
  await alice.keyboard.type('follow bob');
  await expect(alice.locator('[data-testid="palette-command"]').first()).toHaveText('Follow Bob');
  await alice.keyboard.press('Enter');
  await expect(alice.locator('[data-testid="presence-item"][data-name="Bob"]')).toHaveAttribute('data-following', 'true');
});
