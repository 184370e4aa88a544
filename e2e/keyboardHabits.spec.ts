import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { createDemoWorkspace, editorText, openFile, openWorkspace, pageErrors } from './helpers';

/** The e2e server's control port scripts the fake FIM model behind the complete route. */
const controlUrl = `http://127.0.0.1:${Number(process.env.E2E_PORT ?? 4173) + 1}`;

async function modelWillComplete(request: APIRequestContext, text: string): Promise<void> {
  const res = await request.post(`${controlUrl}/script-complete`, { data: { text, chunkChars: 4 } });
  expect(res.status()).toBe(204);
}

const ghost = (page: Page) => page.locator('[data-testid="editor"] .ghost-text-decoration, [data-testid="editor"] .ghost-text');
const focusInEditor = (page: Page) => page.evaluate(() => document.activeElement?.closest('[data-testid="editor"]') != null);

test.afterEach(async ({ request }) => {
  await modelWillComplete(request, '');
});

test('keyboard only: Tab through the page into the editor and out again with Ctrl+M inserts nothing', async ({ page, request }) => {
  const errors = pageErrors(page);
  await modelWillComplete(request, '// eslint-disable-next-line');
  await openWorkspace(page, await createDemoWorkspace(request), 'Kim');
  await expect(editorText(page)).toContainText('Flint');
  const before = await editorText(page).innerText();

  // From the top of the page, Tab until the keyboard is in the editor.
  await page.locator('body').focus();
  for (let presses = 0; !(await focusInEditor(page)); presses++) {
    expect(presses, 'Tab never reached the editor').toBeLessThan(80);
    await page.keyboard.press('Tab');
  }
  // Tab in the editor indents (as in VS Code) — it is not typing, so no ghost text follows it,
  // and the next Tab indents again instead of accepting a suggestion nobody asked for.
  await page.keyboard.press('Tab');
  await page.waitForTimeout(600); // long enough for a debounced request and its answer, were one due
  await expect(ghost(page)).toHaveCount(0);
  await page.keyboard.press('Tab');
  await expect(page.getByTestId('autocomplete-status')).not.toHaveAttribute('title', /[1-9]\d* requests/);
  await page.keyboard.press('Control+z');
  await page.keyboard.press('Control+z');
  await expect.poll(() => editorText(page).innerText()).toBe(before);

  // Ctrl+M: Tab moves the focus, as everywhere else on the page.
  await page.keyboard.press('Control+m');
  await page.keyboard.press('Tab');
  await expect.poll(() => focusInEditor(page)).toBe(false);
  expect(await editorText(page).innerText()).toBe(before);
  expect(await editorText(page).innerText()).not.toContain('eslint');
  expect(errors).toEqual([]);
});

test('with the suggestion list open, Tab takes its highlighted item, not the ghost text', async ({ page, request }) => {
  const errors = pageErrors(page);
  await openWorkspace(page, await createDemoWorkspace(request), 'Lee');
  await openFile(page, 'src/index.ts');
  // A ghost text that extends the highlighted item: Monaco would take it along with the item.
  await modelWillComplete(request, 'ore.open.length; // GHOST_SHOULD_NOT_APPEAR');
  await editorText(page).click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type('\nconst n = st', { delay: 30 });
  await expect(ghost(page).first()).toBeVisible();
  await page.keyboard.press('Control+Space');
  const list = page.locator('.suggest-widget.visible');
  await expect(list).toContainText('store');
  await expect(list.locator('.monaco-list-row.focused')).toContainText('store');
  await page.keyboard.press('Tab');
  await expect(list).toHaveCount(0);
  await expect(editorText(page)).toContainText('const n = store');
  await expect(editorText(page)).not.toContainText('GHOST_SHOULD_NOT_APPEAR');
  expect(errors).toEqual([]);
});
