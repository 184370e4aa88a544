import { expect, test, type Page } from '@playwright/test';
import { createDemoWorkspace, editorText, openFile, openWorkspace, pageErrors, screenshotDir } from './helpers';

/** Issue 38, item 7: split editors, Ctrl+Tab, the tab menu, the sidebar's width, Problems, Back/Forward, narrow widths. */

const splitText = (page: Page) => page.locator('[data-testid="split-editor"] .view-lines');
/** Whether the keyboard is in the editor marked `testId` (Monaco types through an EditContext or a textarea). */
const focusIn = (page: Page, testId: string) => page.evaluate((id) => document.activeElement?.closest(`[data-testid="${id}"]`) != null, testId);
const activeTab = (page: Page, group: number) => page.locator(`[data-testid="editor-group"][data-group="${group}"] .tab--active`);

test('Ctrl+\\ splits the editor: two groups on one file edit the same text, Ctrl+1/2 move between them, the layout comes back on reload', async ({ page, request }) => {
  const errors = pageErrors(page);
  await openWorkspace(page, await createDemoWorkspace(request), 'Sol');
  await openFile(page, 'src/format.ts');
  await editorText(page).click();
  await page.keyboard.press('Control+Backslash');
  const groups = page.getByTestId('editor-group');
  await expect(groups).toHaveCount(2);
  await expect(activeTab(page, 1)).toHaveAttribute('data-path', 'src/format.ts');
  await expect(page.locator('.editor-group--focused')).toHaveAttribute('data-group', '1');

  // Typed in the second group, shown in the first at once: one model, one Y.Text.
  await splitText(page).click();
  await page.keyboard.press('Control+Home');
  await page.keyboard.type('// typed in the split');
  await page.keyboard.press('Enter');
  await expect(editorText(page)).toContainText('// typed in the split');
  await page.keyboard.press('Control+1');
  await expect(page.locator('.editor-group--focused')).toHaveAttribute('data-group', '0');
  await expect.poll(() => focusIn(page, 'editor')).toBe(true);
  await page.keyboard.type('// and in the first ');
  await expect(splitText(page)).toContainText('// and in the first');

  // A file picked in the tree opens in the focused group.
  await page.keyboard.press('Control+2');
  await expect.poll(() => focusIn(page, 'split-editor')).toBe(true);
  await page.locator('[data-testid="tree-item"][data-path="src/index.ts"]').click();
  await expect(activeTab(page, 1)).toHaveAttribute('data-path', 'src/index.ts');
  await expect(activeTab(page, 0)).toHaveAttribute('data-path', 'src/format.ts');
  await expect(splitText(page)).toContainText("import { formatList } from './format';");
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.screenshot({ path: `${screenshotDir}/layout-split-1440.png` });

  await page.reload();
  await expect(page.getByTestId('status-connection')).toContainText('Connected');
  await expect(groups).toHaveCount(2);
  await expect(activeTab(page, 0)).toHaveAttribute('data-path', 'src/format.ts');
  await expect(activeTab(page, 1)).toHaveAttribute('data-path', 'src/index.ts');
  await expect(page.locator('[data-testid="editor-group"][data-group="1"] [data-testid="tab"]')).toHaveCount(2);
  await expect(splitText(page)).toContainText("import { formatList } from './format';");

  // Closing the last tabs of a group closes the group.
  await page.locator('[data-testid="split-editor"] .view-lines').click();
  await page.keyboard.press('Alt+W');
  await expect(activeTab(page, 1)).toHaveAttribute('data-path', 'src/format.ts');
  await page.keyboard.press('Alt+W');
  await expect(groups).toHaveCount(1);
  await expect(activeTab(page, 0)).toHaveAttribute('data-path', 'src/format.ts');
  expect(errors).toEqual([]);
});

test('Ctrl+Tab switches to the tab used before; held, it lists the group in the order used', async ({ page, request }) => {
  const errors = pageErrors(page);
  await openWorkspace(page, await createDemoWorkspace(request), 'Tao');
  await openFile(page, 'src/format.ts');
  await openFile(page, 'src/index.ts');
  await openFile(page, 'README.md');
  await editorText(page).click();
  await page.keyboard.press('Control+Tab');
  await expect(activeTab(page, 0)).toHaveAttribute('data-path', 'src/index.ts');
  await page.keyboard.press('Control+Tab');
  await expect(activeTab(page, 0)).toHaveAttribute('data-path', 'README.md');

  await page.keyboard.down('Control');
  await page.keyboard.press('Tab');
  await page.keyboard.press('Tab');
  const switcher = page.getByTestId('tab-switcher');
  await expect(switcher.getByRole('option')).toHaveText([/README\.md/, /index\.ts/, /format\.ts/]);
  await expect(switcher.getByRole('option', { selected: true })).toContainText('format.ts');
  await page.screenshot({ path: `${screenshotDir}/layout-ctrl-tab.png` });
  await page.keyboard.up('Control');
  await expect(switcher).toHaveCount(0);
  await expect(activeTab(page, 0)).toHaveAttribute('data-path', 'src/format.ts');
  await page.keyboard.press('Control+Shift+Tab');
  await expect(activeTab(page, 0)).toHaveAttribute('data-path', 'src/index.ts');
  expect(errors).toEqual([]);
});

test('the tab menu, by right click and by Shift+F10: close others, to the right, all; copy paths; reveal; split', async ({ page, request }) => {
  const errors = pageErrors(page);
  await openWorkspace(page, await createDemoWorkspace(request), 'Uma');
  for (const path of ['src/format.ts', 'src/index.ts', 'src/model/task.ts', 'README.md']) await openFile(page, path);
  const tabs = page.locator('[data-testid="editor-group"][data-group="0"] [data-testid="tab"]');
  const menu = page.getByTestId('tab-menu');
  const tab = (path: string) => page.locator(`[data-testid="tab"][data-path="${path}"]`);

  await tab('src/model/task.ts').click({ button: 'right' });
  await expect(menu.getByRole('menuitem')).toHaveText([/^Close/, 'Close Others', 'Close to the Right', 'Close All', 'Copy Path', 'Copy Relative Path', 'Reveal in Explorer', /^Split Right/]);
  await page.screenshot({ path: `${screenshotDir}/layout-tab-menu.png` });
  await menu.getByRole('menuitem', { name: 'Copy Relative Path' }).click();
  await expect(menu).toHaveCount(0);
  await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe('src/model/task.ts');
  await tab('src/model/task.ts').click({ button: 'right' });
  await menu.getByRole('menuitem', { name: 'Copy Path', exact: true }).click();
  await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe('/src/model/task.ts');
  // README.md opened first, by itself: the tabs read README.md, format.ts, index.ts, task.ts.
  await tab('src/index.ts').click({ button: 'right' });
  await menu.getByRole('menuitem', { name: 'Close to the Right' }).click();
  await expect(tabs).toHaveCount(3);
  await expect(tab('src/model/task.ts')).toHaveCount(0);

  // Keyboard only: focus a tab, Shift+F10, arrows, Enter.
  await tab('src/index.ts').click();
  await tab('src/index.ts').focus();
  await page.keyboard.press('Shift+F10');
  await expect(menu.getByRole('menuitem').first()).toBeFocused();
  await page.keyboard.press('ArrowDown');
  await expect(menu.getByRole('menuitem', { name: 'Close Others' })).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(menu).toHaveCount(0);
  await expect(tab('src/index.ts')).toBeFocused();
  await page.keyboard.press('Shift+F10');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  await expect(tabs).toHaveCount(1);
  await expect(tab('src/index.ts')).toBeFocused();

  // Reveal in Explorer: the tree opens its folders, selects the file and takes the keyboard.
  await openFile(page, 'src/model/task.ts');
  await page.locator('[data-testid="tree-item"][data-path="src/model"]').click(); // fold the folder
  await expect(page.locator('[data-testid="tree-item"][data-path="src/model/task.ts"]')).toHaveCount(0);
  await page.keyboard.press('Control+b');
  await expect(page.getByTestId('file-tree')).toBeHidden();
  await tab('src/model/task.ts').click({ button: 'right' });
  await menu.getByRole('menuitem', { name: 'Reveal in Explorer' }).click();
  const row = page.locator('[data-testid="tree-item"][data-path="src/model/task.ts"]');
  await expect(row).toBeVisible();
  await expect(row).toHaveAttribute('aria-selected', 'true');
  await expect(page.getByTestId('file-tree')).toBeFocused();

  await tab('src/model/task.ts').click({ button: 'right' });
  await menu.getByRole('menuitem', { name: /^Split Right/ }).click();
  await expect(page.getByTestId('editor-group')).toHaveCount(2);
  await expect(activeTab(page, 1)).toHaveAttribute('data-path', 'src/model/task.ts');
  await tab('src/index.ts').click({ button: 'right' });
  await menu.getByRole('menuitem', { name: 'Close All' }).click();
  await expect(page.getByTestId('editor-group')).toHaveCount(1);
  await expect(activeTab(page, 0)).toHaveAttribute('data-path', 'src/model/task.ts');
  expect(errors).toEqual([]);
});

test('the sidebar is resized by dragging its edge or with the arrow keys on it, and keeps its width in this browser', async ({ page, request }) => {
  const errors = pageErrors(page);
  const link = await createDemoWorkspace(request);
  await openWorkspace(page, link, 'Vic');
  const sidebar = page.getByRole('navigation', { name: 'Files' });
  const handle = page.getByRole('separator', { name: 'Resize the sidebar' });
  const width = async () => Math.round((await sidebar.boundingBox())?.width ?? 0);
  const before = await width();
  const box = (await handle.boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + 200);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width / 2 + 60, box.y + 200, { steps: 4 });
  await page.mouse.move(box.x + box.width / 2 + 120, box.y + 200, { steps: 4 });
  await page.mouse.up();
  await expect.poll(width).toBe(before + 120);
  await handle.focus();
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('ArrowLeft');
  await expect.poll(width).toBe(before + 120 - 32);
  await expect(handle).toHaveAttribute('aria-valuenow', String(before + 88));

  await page.reload();
  await expect(page.getByTestId('status-connection')).toContainText('Connected');
  await expect.poll(width).toBe(before + 88);
  await editorText(page).click();
  await page.keyboard.press('Control+b');
  await expect(sidebar).toBeHidden();
  await expect(handle).toHaveCount(0);
  await page.keyboard.press('Control+b');
  await expect.poll(width).toBe(before + 88);
  expect(errors).toEqual([]);
});

test('Problems (Ctrl+Shift+M and the palette) lists the open files\' errors by file, counts them in the status bar, and Enter jumps to the line', async ({ page, request }) => {
  const errors = pageErrors(page);
  await openWorkspace(page, await createDemoWorkspace(request), 'Wen');
  await openFile(page, 'src/index.ts');
  await openFile(page, 'src/format.ts');
  await editorText(page).click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type("const broken: number = 'text';");
  const lastLine = (await page.getByTestId('status-cursor').innerText()).match(/Ln (\d+)/)?.[1];
  await expect(page.getByTestId('status-problems')).toHaveAccessibleName('1 error, 0 warnings', { timeout: 20_000 });
  await page.keyboard.press('Control+Home');
  await expect(page.getByTestId('status-cursor')).toContainText('Ln 1,');

  await page.keyboard.press('Control+Shift+M');
  const panel = page.getByTestId('problems-panel');
  await expect(panel).toBeVisible();
  await expect(panel.getByTestId('problems-file')).toHaveText([/format\.ts\s*src\s*1/]);
  await expect(panel.getByTestId('problems-item')).toHaveCount(1);
  await expect(panel.getByTestId('problems-item')).toContainText("Type 'string' is not assignable to type 'number'.");
  await expect(panel.getByTestId('problems-item')).toContainText(`[Ln ${lastLine}, Col 7]`);
  await expect(panel.getByRole('listbox')).toBeFocused();
  await page.screenshot({ path: `${screenshotDir}/layout-problems.png` });
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('status-cursor')).toContainText(`Ln ${lastLine}, Col 7`);
  await expect.poll(() => focusIn(page, 'editor')).toBe(true);

  // From the palette too; and a click on the status bar's counts.
  await page.keyboard.press('Control+Shift+P');
  await page.keyboard.type('Close Problems');
  await page.keyboard.press('Enter');
  await expect(panel).toHaveCount(0);
  await page.getByTestId('status-problems').click();
  await expect(panel).toBeVisible();
  await panel.getByTestId('problems-item').click();
  await expect(page.getByTestId('status-cursor')).toContainText(`Ln ${lastLine}, Col 7`);
  expect(errors).toEqual([]);
});

test('Alt+Left goes back to where the caret was before F12 into another file; Alt+Right goes forward again', async ({ page, request }) => {
  const errors = pageErrors(page);
  await openWorkspace(page, await createDemoWorkspace(request), 'Xan');
  await openFile(page, 'src/format.ts');
  await openFile(page, 'src/index.ts');
  await editorText(page).click();
  await page.keyboard.press('Control+f');
  await page.keyboard.type('formatList(store');
  await page.keyboard.press('Enter');
  await page.keyboard.press('Escape');
  await page.keyboard.press('ArrowLeft'); // the caret on formatList, not after store
  await expect(page.getByTestId('status-cursor')).toContainText('Ln 12, Col 13');
  await page.keyboard.press('F12');
  await expect(activeTab(page, 0)).toHaveAttribute('data-path', 'src/format.ts', { timeout: 20_000 });
  await expect(page.getByTestId('status-cursor')).toContainText('Ln 10,');
  await page.keyboard.press('Alt+ArrowLeft');
  await expect(activeTab(page, 0)).toHaveAttribute('data-path', 'src/index.ts');
  await expect(page.getByTestId('status-cursor')).toContainText('Ln 12, Col 13');
  await expect(page).toHaveURL(/\/w\//);
  await page.keyboard.press('Alt+ArrowRight');
  await expect(activeTab(page, 0)).toHaveAttribute('data-path', 'src/format.ts');
  await expect(page.getByTestId('status-cursor')).toContainText('Ln 10,');
  expect(errors).toEqual([]);
});

/** Whether an element lies wholly inside the window, horizontally. */
async function inWindow(page: Page, testId: string): Promise<boolean> {
  return page.getByTestId(testId).evaluate((el) => {
    const box = el.getBoundingClientRect();
    return box.width > 0 && box.left >= 0 && box.right <= window.innerWidth + 0.5;
  });
}

const scrollsSideways = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth || document.body.scrollWidth > window.innerWidth);

test('narrow windows: at 760 and 700 px everything fits, at 420 px nothing scrolls sideways and Share is reachable', async ({ page, request }) => {
  const errors = pageErrors(page);
  await page.setViewportSize({ width: 1440, height: 900 });
  await openWorkspace(page, await createDemoWorkspace(request), 'Yara');
  await openFile(page, 'src/format.ts');
  await openFile(page, 'src/index.ts');
  await page.screenshot({ path: `${screenshotDir}/layout-1440x900.png` });

  for (const width of [760, 700]) {
    await page.setViewportSize({ width, height: 700 });
    await expect(page.getByTestId('share-button')).toBeVisible();
    await expect.poll(() => inWindow(page, 'share-button')).toBe(true);
    await expect.poll(() => inWindow(page, 'status-cursor')).toBe(true);
    await expect.poll(() => inWindow(page, 'status-language')).toBe(true);
    await expect(page.getByTestId('status-cursor')).toHaveText(/^Ln \d+, Col \d+$/);
    await expect.poll(() => page.getByTestId('status-cursor').evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
    await expect.poll(() => scrollsSideways(page)).toBe(false);
    await page.screenshot({ path: `${screenshotDir}/layout-${width}x700.png` });
    // With the agent panel open too.
    await page.getByTestId('agent-panel-toggle').click();
    await expect(page.locator('.agent-panel')).toBeVisible();
    await expect.poll(() => inWindow(page, 'share-button')).toBe(true);
    await expect.poll(() => inWindow(page, 'status-cursor')).toBe(true);
    await expect.poll(() => scrollsSideways(page)).toBe(false);
    await page.screenshot({ path: `${screenshotDir}/layout-${width}x700-agent.png` });
    await page.getByTestId('agent-panel-toggle').click();
    await expect(page.locator('.agent-panel')).toHaveCount(0);
  }

  await page.setViewportSize({ width: 420, height: 800 });
  await expect.poll(() => scrollsSideways(page)).toBe(false);
  await expect(page.getByTestId('share-button')).toBeVisible();
  await expect.poll(() => inWindow(page, 'share-button')).toBe(true);
  await page.screenshot({ path: `${screenshotDir}/layout-420x800.png` });
  // The sidebar comes over the editor, and goes once a file is picked.
  await page.getByTestId('sidebar-toggle').click();
  await expect(page.getByTestId('file-tree')).toBeVisible();
  await expect.poll(() => scrollsSideways(page)).toBe(false);
  await page.screenshot({ path: `${screenshotDir}/layout-420x800-sidebar.png` });
  await page.locator('[data-testid="tree-item"][data-path="README.md"]').click();
  await expect(activeTab(page, 0)).toHaveAttribute('data-path', 'README.md');
  await expect(page.getByTestId('file-tree')).toBeHidden();
  await page.getByTestId('share-button').click();
  await expect(page.getByTestId('share-dialog')).toBeVisible();
  await expect.poll(() => scrollsSideways(page)).toBe(false);
  await page.screenshot({ path: `${screenshotDir}/layout-420x800-share.png` });
  expect(errors).toEqual([]);
});

test("a remote cursor's name on line 1 is not cut off by the editor's top", async ({ browser, page, request }) => {
  const errors = pageErrors(page);
  const link = await createDemoWorkspace(request);
  await openWorkspace(page, link, 'Zoe');
  await openFile(page, 'src/format.ts');
  const guest = await (await browser.newContext()).newPage();
  const guestErrors = pageErrors(guest);
  await openWorkspace(guest, link, 'Abe');
  await openFile(guest, 'src/format.ts');
  await editorText(guest).click();
  await guest.keyboard.press('Control+Home');
  await guest.keyboard.press('End');
  const head = page.locator('[data-testid="editor"] .yRemoteSelectionHead');
  await expect(head).toHaveCount(1);
  // How far the label's top is below the editor's; null while y-monaco redraws the head (the
  // element found can be replaced by the time it is measured).
  const below = () =>
    head.evaluate((el) => {
      const guard = el.closest('.overflow-guard');
      if (!guard) return null;
      const label = getComputedStyle(el, '::after');
      return el.getBoundingClientRect().top + parseFloat(label.top) - guard.getBoundingClientRect().top;
    });
  await expect.poll(below).toBeGreaterThanOrEqual(0);
  await page.locator('[data-testid="editor"]').screenshot({ path: `${screenshotDir}/layout-remote-label-line1.png` });
  expect(errors).toEqual([]);
  expect(guestErrors).toEqual([]);
});
