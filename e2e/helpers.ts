import { expect, type APIRequestContext, type Browser, type Page } from '@playwright/test';

export const screenshotDir = 'test-results/screenshots';

/** Creates a workspace seeded with the demo project, over the REST API; returns its owner link. */
export async function createDemoWorkspace(request: APIRequestContext): Promise<string> {
  const res = await request.post('/api/workspaces', { data: { name: 'E2E demo', seed: 'demo' } });
  expect(res.status()).toBe(201);
  const body = (await res.json()) as { url: string };
  const url = new URL(body.url);
  return url.pathname + url.hash;
}

export async function openWorkspace(page: Page, link: string, name: string): Promise<void> {
  await page.addInitScript((displayName) => localStorage.setItem('flint.displayName', displayName), name);
  await page.goto(link);
  await expect(page.getByTestId('status-connection')).toContainText('Connected');
}

export async function openFile(page: Page, path: string): Promise<void> {
  await page.locator(`[data-testid="tree-item"][data-path="${path}"]`).click();
  await expect(page.locator(`[data-testid="tab"][data-path="${path}"]`)).toBeVisible();
  await expect(page.locator('[data-testid="editor"] .view-lines')).toBeVisible();
}

/** Puts the caret at the start of the file and types a line there. */
export async function typeAtTop(page: Page, text: string): Promise<void> {
  await page.locator('[data-testid="editor"] .view-lines').click();
  await page.keyboard.press('Control+Home');
  await page.keyboard.type(text);
  await page.keyboard.press('Enter');
}

export function editorText(page: Page) {
  return page.locator('[data-testid="editor"] .view-lines');
}

/** Makes a link from the Share dialog and returns its path + fragment. */
export async function shareLink(page: Page, role: 'editor' | 'viewer', expiry?: string): Promise<string> {
  await page.getByTestId('share-button').click();
  const dialog = page.getByTestId('share-dialog');
  await expect(dialog).toBeVisible();
  await dialog.getByTestId('share-role').selectOption(role);
  if (expiry) await dialog.getByTestId('share-expiry').selectOption(expiry);
  await dialog.getByTestId('share-create').click();
  const input = dialog.getByTestId('share-url');
  await expect(input).toHaveValue(/#token=/);
  const url = new URL(await input.inputValue());
  await page.keyboard.press('Escape');
  return url.pathname + url.hash;
}

/**
 * A page in a context of its own whose uncaught errors (an exception, or a rejected promise no
 * one handled) are pushed to `errors`, with their stacks: a test that ends with
 * `expect(errors).toEqual([])` fails on any of them.
 */
export async function watchedPage(browser: Browser, errors: string[]): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  page.on('pageerror', (error) => errors.push(error.stack ?? `${error.name}: ${error.message}`));
  return page;
}

/** Collects the page's uncaught errors; a journey ends by expecting none (`expect(errors).toEqual([])`). */
export function pageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`${error.name}: ${error.message}`));
  return errors;
}
