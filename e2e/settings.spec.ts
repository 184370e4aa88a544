import { expect, test, type Page } from '@playwright/test';
import { createDemoWorkspace, editorText, openFile, openWorkspace, watchedPage } from './helpers';

/** Issue 38, item 6: settings per person in this browser — theme, font size, word wrap, keys. */

const pageErrors: string[] = [];
test.afterEach(() => {
  expect(pageErrors.splice(0)).toEqual([]);
});

const theme = (page: Page) => page.evaluate(() => document.documentElement.dataset.theme);
const bodyBackground = (page: Page) => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
const editorBackground = (page: Page) => page.evaluate(() => getComputedStyle(document.querySelector('[data-testid="editor"] .monaco-editor-background')!).backgroundColor);
/** Monaco marks its editor with the base of its theme: vs, vs-dark, hc-black or hc-light. */
const monacoBase = (page: Page) =>
  page.evaluate(() => {
    const classes = document.querySelector('[data-testid="editor"] .monaco-editor')!.classList;
    return ['hc-black', 'hc-light', 'vs-dark', 'vs'].find((name) => classes.contains(name)) ?? null;
  });
const fontSize = (page: Page) => page.evaluate(() => getComputedStyle(document.querySelector('[data-testid="editor"] .view-line')!).fontSize);

async function openSettings(page: Page) {
  await page.keyboard.press('Control+Comma');
  const dialog = page.getByTestId('settings-dialog');
  await expect(dialog).toBeVisible();
  return dialog;
}

test('the theme follows a light system preference, in the chrome and in Monaco, and follows it when it changes', async ({ browser, request }) => {
  const context = await browser.newContext({ colorScheme: 'light' });
  const page = await context.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.stack ?? error.message));
  const link = await createDemoWorkspace(request);
  // The front page too.
  await page.goto('/');
  await expect.poll(() => theme(page)).toBe('light');
  await openWorkspace(page, link, 'Lena');
  await openFile(page, 'src/format.ts');
  await expect.poll(() => theme(page)).toBe('light');
  expect(await bodyBackground(page)).toBe('rgb(255, 255, 255)');
  await expect.poll(() => monacoBase(page)).toBe('vs');
  expect(await editorBackground(page)).toBe('rgb(255, 255, 255)');

  await page.emulateMedia({ colorScheme: 'dark' });
  await expect.poll(() => theme(page)).toBe('dark');
  await expect.poll(() => monacoBase(page)).toBe('vs-dark');
  expect(await bodyBackground(page)).toBe('rgb(22, 24, 29)');

  // The Settings view says what "follow the system" gives now.
  const dialog = await openSettings(page);
  await expect(dialog.getByTestId('settings-theme')).toHaveValue('system');
  await expect(dialog.getByTestId('settings-theme').locator('option[value="system"]')).toHaveText('Follow the system (now dark)');
  await context.close();
});

test('a theme chosen in Settings (or the palette) persists across a reload, over the system preference', async ({ browser, request }) => {
  const page = await watchedPage(browser, pageErrors);
  const link = await createDemoWorkspace(request);
  await openWorkspace(page, link, 'Hana');
  await openFile(page, 'src/format.ts');
  const dialog = await openSettings(page);
  await expect(dialog.getByTestId('settings-font-size')).toBeFocused();
  await dialog.getByTestId('settings-theme').selectOption('high-contrast');
  await expect.poll(() => theme(page)).toBe('high-contrast');
  await expect.poll(() => monacoBase(page)).toBe('hc-black');
  await page.keyboard.press('Escape');
  await expect(dialog).toHaveCount(0);

  await page.reload();
  await expect(page.getByTestId('status-connection')).toContainText('Connected');
  await expect.poll(() => theme(page)).toBe('high-contrast');
  await expect.poll(() => monacoBase(page)).toBe('hc-black');

  // The palette's "Preferences: Color Theme" opens Settings at the theme; a light system changes nothing.
  await page.emulateMedia({ colorScheme: 'light' });
  await page.keyboard.press('Control+Shift+P');
  await page.keyboard.type('color theme');
  await expect(page.locator('[data-testid="palette-command"]').first()).toHaveAttribute('data-command', 'color-theme');
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('settings-theme')).toBeFocused();
  await page.keyboard.press('Escape');
  expect(await theme(page)).toBe('high-contrast');
  await page.keyboard.press('Control+Shift+P');
  await page.keyboard.type('color theme: light');
  await page.keyboard.press('Enter');
  await expect.poll(() => theme(page)).toBe('light');
  await expect.poll(() => monacoBase(page)).toBe('vs');

  // Per person, not per workspace: another workspace in this browser opens light too.
  await openWorkspace(page, await createDemoWorkspace(request), 'Hana');
  await expect.poll(() => theme(page)).toBe('light');
});

test('Alt+Z wraps long lines and unwraps them, as in VS Code, and the choice persists', async ({ browser, request }) => {
  const page = await watchedPage(browser, pageErrors);
  await openWorkspace(page, await createDemoWorkspace(request), 'Wim');
  await openFile(page, 'src/format.ts');
  await editorText(page).click();
  await page.keyboard.press('Control+End');
  await page.keyboard.press('Enter');
  await page.keyboard.insertText(`// ${'wrap me '.repeat(60)}`);
  // Unwrapped, the long line is one row of the editor; wrapped, several.
  const rows = page.locator('[data-testid="editor"] .view-line', { hasText: 'wrap me' });
  await expect(rows).toHaveCount(1);
  await page.keyboard.press('Alt+z');
  await expect.poll(() => rows.count()).toBeGreaterThan(2);
  await page.reload();
  await expect(page.getByTestId('status-connection')).toContainText('Connected');
  await expect(rows.first()).toBeVisible();
  await expect.poll(() => rows.count()).toBeGreaterThan(2);
  const dialog = await openSettings(page);
  await expect(dialog.getByTestId('settings-word-wrap')).toBeChecked();
  await page.keyboard.press('Escape');
  await editorText(page).click();
  await page.keyboard.press('Alt+z');
  await expect(rows).toHaveCount(1);
});

test('the font size (Ctrl+= / Ctrl+-, the zoom, the field) persists across a reload and across workspaces', async ({ browser, request }) => {
  const page = await watchedPage(browser, pageErrors);
  await openWorkspace(page, await createDemoWorkspace(request), 'Fay');
  await openFile(page, 'src/format.ts');
  await expect.poll(() => fontSize(page)).toBe('13px');
  await editorText(page).click();
  await page.keyboard.press('Control+Equal');
  // Ctrl++ (Shift on most layouts) too.
  await page.keyboard.press('Control+Shift+Equal');
  await expect.poll(() => fontSize(page)).toBe('15px');
  await page.keyboard.press('Control+Minus');
  await expect.poll(() => fontSize(page)).toBe('14px');
  await page.reload();
  await expect(page.getByTestId('status-connection')).toContainText('Connected');
  await expect(page.locator('[data-testid="editor"] .view-line').first()).toBeVisible();
  await expect.poll(() => fontSize(page)).toBe('14px');
  // Set in the field; the other workspace of this person has it too.
  const dialog = await openSettings(page);
  await expect(dialog.getByTestId('settings-font-size')).toHaveValue('14');
  await dialog.getByTestId('settings-font-size').fill('17');
  await expect.poll(() => fontSize(page)).toBe('17px');
  await page.keyboard.press('Escape');
  // Ctrl+wheel (Monaco's zoom) moves the same setting by a step.
  const box = (await editorText(page).boundingBox())!;
  await page.mouse.move(box.x + 100, box.y + 40);
  await page.keyboard.down('Control');
  await page.mouse.wheel(0, -120);
  await page.keyboard.up('Control');
  await expect.poll(() => fontSize(page)).toBe('18px');
  await openWorkspace(page, await createDemoWorkspace(request), 'Fay');
  await openFile(page, 'src/format.ts');
  await expect.poll(() => fontSize(page)).toBe('18px');
  await page.keyboard.press('Control+Digit0');
  await expect.poll(() => fontSize(page)).toBe('13px');
});

test('a rebound key runs its command, the old key does not, the palette and F1 show the new key, conflicts are named', async ({ browser, request }) => {
  const page = await watchedPage(browser, pageErrors);
  await openWorkspace(page, await createDemoWorkspace(request), 'Rei');
  await openFile(page, 'src/format.ts');
  const sidebar = page.locator('nav[aria-label="Files"]');
  const dialog = await openSettings(page);
  const row = dialog.locator('[data-testid="key-row"][data-command="sidebar"]');
  await expect(row.getByTestId('key-chord')).toHaveText('Ctrl+B');
  // Keyboard only: filter, Tab to the row's Change, press the new chord.
  await dialog.getByTestId('settings-keys-filter').focus();
  await page.keyboard.type('sidebar');
  await expect(dialog.getByTestId('key-row')).toHaveCount(1);
  await page.keyboard.press('Tab');
  await expect(row.getByTestId('key-change')).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(row.getByTestId('key-recorder')).toBeFocused();
  // A plain letter is typing, and refused.
  await page.keyboard.press('Shift+KeyQ');
  await expect(row.getByTestId('key-recorder')).toContainText('is typing');
  await page.keyboard.press('Control+Alt+KeyJ');
  await expect(row.getByTestId('key-chord')).toHaveText('Ctrl+Alt+J');
  await expect(row.getByTestId('key-change')).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(dialog).toHaveCount(0);

  await editorText(page).click();
  await page.keyboard.press('Control+b');
  await expect(sidebar).toBeVisible();
  await page.keyboard.press('Control+Alt+j');
  await expect(sidebar).toBeHidden();
  await page.keyboard.press('Control+Alt+j');
  await expect(sidebar).toBeVisible();

  await page.keyboard.press('Control+Shift+P');
  await expect(page.locator('[data-command="sidebar"] .palette-key')).toHaveText('Ctrl+Alt+J');
  await page.keyboard.press('Escape');

  // Rebinding the palette: the new key opens it, Ctrl+Shift+P does not.
  await openSettings(page);
  const paletteRow = page.locator('[data-testid="key-row"][data-command="command-palette"]');
  await paletteRow.getByTestId('key-change').click();
  await page.keyboard.press('Control+Shift+KeyF');
  // Search holds that key already: both rows name the other.
  await expect(paletteRow.getByTestId('key-conflict')).toContainText('Search across files');
  await expect(page.locator('[data-testid="key-row"][data-command="search"]').getByTestId('key-conflict')).toContainText('Show the command palette');
  await paletteRow.getByTestId('key-change').click();
  await page.keyboard.press('F6');
  await expect(paletteRow.getByTestId('key-conflict')).toHaveCount(0);
  await page.keyboard.press('Escape');
  await editorText(page).click();
  await page.keyboard.press('Control+Shift+P');
  await expect(page.getByTestId('command-palette')).toHaveCount(0);
  await page.keyboard.press('F6');
  await expect(page.getByTestId('command-palette')).toBeVisible();
  await page.keyboard.press('Escape');

  // Kept across a reload; Reset brings the default back.
  await page.reload();
  await expect(page.getByTestId('status-connection')).toContainText('Connected');
  await page.keyboard.press('Control+Alt+j');
  await expect(sidebar).toBeHidden();
  await openSettings(page);
  await page.locator('[data-testid="key-row"][data-command="sidebar"]').getByTestId('key-reset').click();
  await page.keyboard.press('Escape');
  await page.keyboard.press('Control+b');
  await expect(sidebar).toBeVisible();

  // A key taken away: Alt+N makes no file, and the button's tooltip no longer names it.
  await expect(page.getByTestId('new-file-button')).toHaveAttribute('title', 'New file (Alt+N)');
  await editorText(page).click();
  await page.keyboard.press('Alt+n');
  await expect(page.getByTestId('tree-name-input')).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('tree-name-input')).toHaveCount(0);
  await openSettings(page);
  await page.locator('[data-testid="key-row"][data-command="new-file"]').getByTestId('key-remove').click();
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('new-file-button')).toHaveAttribute('title', 'New file');
  await editorText(page).click();
  await page.keyboard.press('Alt+n');
  // A key pressed after it is handled after it: once the palette is open, Alt+N has been handled.
  await page.keyboard.press('F6');
  await expect(page.getByTestId('command-palette')).toBeVisible();
  await expect(page.getByTestId('tree-name-input')).toHaveCount(0);
  await page.keyboard.press('Escape');

  // F1 lists the agent panel with its key, and shows the new one once rebound.
  await editorText(page).click();
  await page.keyboard.press('F1');
  await page.keyboard.type('Toggle Word Wrap');
  await expect(page.locator('.quick-input-widget .monaco-list-row', { hasText: 'View: Toggle Word Wrap' }).first()).toContainText('Alt+Z');
  await page.keyboard.press('Escape');
});
