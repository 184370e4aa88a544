import { expect, test, type Browser, type Page } from '@playwright/test';
import { createDemoWorkspace, editorText, openFile, openWorkspace, pageErrors, screenshotDir, shareLink } from './helpers';

const tokenOf = (link: string) => new URL(link, 'http://x').hash.replace('#token=', '');
const workspaceIdOf = (link: string) => /\/w\/([\w-]+)/.exec(link)?.[1] ?? '';

async function newPage(browser: Browser): Promise<Page> {
  return (await browser.newContext()).newPage();
}

async function ownerLinkId(page: Page): Promise<string> {
  await page.getByTestId('share-button').click();
  const row = page.locator('[data-testid="link-row"][data-role="owner"]');
  await expect(row).toHaveCount(1);
  const id = (await row.getAttribute('data-link-id')) ?? '';
  await page.keyboard.press('Escape');
  return id;
}

test('an editor link cannot revoke the owner link; the last owner link stays; revoking asks first and names who did it', async ({ browser, request }) => {
  const ownerLink = await createDemoWorkspace(request);
  const workspaceId = workspaceIdOf(ownerLink);
  const owner = await newPage(browser);
  const ownerErrors = pageErrors(owner);
  await openWorkspace(owner, ownerLink, 'Olga');
  const editorLink = await shareLink(owner, 'editor');
  const guest = await newPage(browser);
  const guestErrors = pageErrors(guest);
  await openWorkspace(guest, editorLink, 'Gus');
  // Link management is the owner's: no Share button for an editor, and the gateway refuses one.
  await expect(guest.getByTestId('role-badge')).toHaveText('Editor');
  await expect(guest.getByTestId('share-button')).toHaveCount(0);
  const ownerLinkIdValue = await ownerLinkId(owner);
  const byEditor = await request.delete(`/api/workspaces/${workspaceId}/links/${ownerLinkIdValue}`, { headers: { authorization: `Bearer ${tokenOf(editorLink)}` } });
  expect(byEditor.status()).toBe(403);
  expect(((await request.get(`/api/workspaces/${workspaceId}/links`, { headers: { authorization: `Bearer ${tokenOf(editorLink)}` } })).status())).toBe(403);
  // The owner's own last owner link cannot go either.
  const last = await request.delete(`/api/workspaces/${workspaceId}/links/${ownerLinkIdValue}`, { headers: { authorization: `Bearer ${tokenOf(ownerLink)}` } });
  expect(last.status()).toBe(409);
  expect(((await last.json()) as { error: string }).error).toMatch(/last owner link/);
  await expect(owner.getByTestId('status-connection')).toContainText('Connected');

  await owner.getByTestId('share-button').click();
  const ownerRow = owner.locator('[data-testid="link-row"][data-role="owner"]');
  await expect(ownerRow.getByTestId('revoke-link')).toBeDisabled();
  await expect(ownerRow.getByTestId('revoke-link')).toHaveAttribute('title', /last owner link/);
  const editorRow = owner.locator('[data-testid="link-row"][data-role="editor"]');
  // Revoking asks first; saying no keeps the link.
  const asked: string[] = [];
  owner.once('dialog', (dialog) => {
    asked.push(dialog.message());
    void dialog.dismiss();
  });
  await editorRow.getByTestId('revoke-link').click();
  await expect.poll(() => asked.length).toBe(1);
  expect(asked[0]).toMatch(/Revoke the editor link .*disconnected/);
  await expect(editorRow).toHaveCount(1);
  await expect(guest.getByTestId('status-connection')).toContainText('Connected');
  owner.once('dialog', (dialog) => void dialog.accept());
  await editorRow.getByTestId('revoke-link').click();
  await expect(editorRow).toHaveCount(0);

  const banner = guest.getByTestId('closed-banner');
  await expect(banner).toContainText('This link was revoked by Olga (the owner).');
  await expect(banner.getByRole('button', { name: 'Reload' })).toHaveCount(0);
  expect(ownerErrors).toEqual([]);
  expect(guestErrors).toEqual([]);
});

test('the Share dialog says a link shows once, clears its label, and names roles as the badges do', async ({ page, request }) => {
  const errors = pageErrors(page);
  await openWorkspace(page, await createDemoWorkspace(request), 'Sam');
  await expect(page.getByTestId('role-badge')).toHaveText('Owner');
  await page.getByTestId('share-button').click();
  const dialog = page.getByTestId('share-dialog');
  await expect(dialog.getByTestId('share-lead')).toContainText('shown only once');
  await dialog.getByTestId('share-role').selectOption('viewer');
  await dialog.getByTestId('share-label').fill('For the demo');
  await dialog.getByTestId('share-create').click();
  await expect(dialog.getByTestId('share-url')).toHaveValue(/#token=/);
  await expect(dialog.getByTestId('share-label')).toHaveValue('');
  const viewerRow = dialog.locator('[data-testid="link-row"][data-role="viewer"]');
  await expect(viewerRow.locator('.role-badge')).toHaveText('Viewer');
  await expect(viewerRow).toContainText('For the demo');
  await expect(dialog.locator('[data-testid="link-row"][data-role="owner"] .role-badge')).toHaveText('Owner');
  for (const [width, height] of [[1440, 900], [760, 700]] as const) {
    await page.setViewportSize({ width, height });
    await page.screenshot({ path: `${screenshotDir}/share-dialog-${width}x${height}.png` });
  }
  const viewer = await (await page.context().browser()!.newContext()).newPage();
  await openWorkspace(viewer, new URL(await dialog.getByTestId('share-url').inputValue()).pathname + new URL(await dialog.getByTestId('share-url').inputValue()).hash, 'Val');
  await expect(viewer.getByTestId('role-badge')).toHaveText('Viewer');
  await expect(viewer.getByTestId('status-role')).toHaveText('Viewer');
  expect(errors).toEqual([]);
});

test('a revoked or wrong link opens a plain page that says so, with no IDE around it and no Reload', async ({ browser, request }) => {
  const ownerLink = await createDemoWorkspace(request);
  const workspaceId = workspaceIdOf(ownerLink);
  const owner = await newPage(browser);
  await openWorkspace(owner, ownerLink, 'Ola');
  const editorLink = await shareLink(owner, 'editor');
  const linkId = await owner.evaluate(async ([id, token]) => {
    const res = await fetch(`/api/workspaces/${id}/links`, { headers: { authorization: `Bearer ${token}` } });
    const body = (await res.json()) as { links: Array<{ id: string; role: string }> };
    return body.links.find((l) => l.role === 'editor')?.id ?? '';
  }, [workspaceId, tokenOf(ownerLink)] as const);
  const revoked = await request.delete(`/api/workspaces/${workspaceId}/links/${linkId}`, { headers: { authorization: `Bearer ${tokenOf(ownerLink)}` } });
  expect(revoked.status()).toBe(204);

  const late = await newPage(browser);
  const errors = pageErrors(late);
  await late.goto(editorLink);
  const problem = late.getByTestId('link-problem');
  await expect(problem).toContainText('This link was revoked');
  await expect(problem).toContainText('Ask the owner for a new link');
  await expect(late.getByTestId('editor')).toHaveCount(0);
  await expect(late.getByTestId('share-button')).toHaveCount(0);
  await expect(late.getByRole('button', { name: 'Reload' })).toHaveCount(0);
  for (const [width, height] of [[1440, 900], [760, 700]] as const) {
    await late.setViewportSize({ width, height });
    await late.screenshot({ path: `${screenshotDir}/revoked-link-page-${width}x${height}.png` });
  }
  await late.goto(`/w/${workspaceId}#token=not-a-token-of-this-workspace`);
  await expect(late.getByTestId('link-problem')).toContainText('This link does not open this workspace');
  expect(errors).toEqual([]);
});

test('reload restores tabs, the caret and the font size; /w/<id> without its token opens in the browser that kept it', async ({ page, request }) => {
  const errors = pageErrors(page);
  const ownerLink = await createDemoWorkspace(request);
  const workspaceId = workspaceIdOf(ownerLink);
  await openWorkspace(page, ownerLink, 'Rhea');
  await openFile(page, 'src/index.ts');
  await openFile(page, 'src/format.ts');
  await editorText(page).click();
  await page.keyboard.press('Control+Home');
  for (let i = 0; i < 4; i++) await page.keyboard.press('ArrowDown');
  await page.keyboard.press('End');
  await expect(page.getByTestId('status-cursor')).toContainText('Ln 5,');
  const cursor = await page.getByTestId('status-cursor').innerText();
  // F1 → Editor Font Zoom In.
  await page.keyboard.press('F1');
  await page.keyboard.type('Editor Font Zoom In');
  await page.keyboard.press('Enter');
  const fontSize = () => page.evaluate(() => getComputedStyle(document.querySelector('[data-testid="editor"] .view-line')!).fontSize);
  await expect.poll(fontSize).not.toBe('13px');
  const zoomed = await fontSize();

  await page.reload();
  await expect(page.getByTestId('status-connection')).toContainText('Connected');
  const tabs = page.getByTestId('tab');
  await expect(tabs).toHaveCount(3);
  await expect(page.locator('[data-testid="tab"][aria-selected="true"]')).toHaveAttribute('data-path', 'src/format.ts');
  await expect(page.getByTestId('status-cursor')).toHaveText(cursor);
  await expect.poll(fontSize).toBe(zoomed);

  // The address without its token: this browser kept it, and opens the workspace as its owner.
  await page.goto(`/w/${workspaceId}`);
  await expect(page.getByTestId('status-connection')).toContainText('Connected');
  await expect(page.getByTestId('role-badge')).toHaveText('Owner');
  await page.goto('/');
  await expect(page.getByTestId('recent-workspaces')).toContainText('E2E demo');
  await page.screenshot({ path: `${screenshotDir}/recent-workspaces.png` });
  expect(await page.evaluate(() => localStorage.getItem('flint.workspaces'))).toContain(workspaceId);
  expect(errors).toEqual([]);
});

test('Alt+W inside Find toggles whole word instead of closing the tab; F1 lists Ctrl+L as the agent panel only', async ({ page, request }) => {
  const errors = pageErrors(page);
  await openWorkspace(page, await createDemoWorkspace(request), 'Finn');
  await openFile(page, 'src/index.ts');
  await editorText(page).click();
  await page.keyboard.press('Control+f');
  const find = page.locator('[data-testid="editor"] .find-widget.visible');
  await expect(find).toBeVisible();
  await page.keyboard.type('store');
  await page.keyboard.press('Alt+w');
  await expect(find.locator('[aria-label^="Match Whole Word"]')).toHaveAttribute('aria-checked', 'true');
  await expect(page.locator('[data-testid="tab"][data-path="src/index.ts"]')).toHaveCount(1);
  await page.keyboard.press('Escape');
  await expect(find).toHaveCount(0);
  await page.keyboard.press('Alt+w');
  await expect(page.locator('[data-testid="tab"][data-path="src/index.ts"]')).toHaveCount(0);

  await openFile(page, 'src/index.ts');
  await editorText(page).click();
  await page.keyboard.press('F1');
  const palette = page.locator('.quick-input-widget');
  await page.keyboard.type('Expand Line Selection');
  const expand = palette.locator('.monaco-list-row', { hasText: 'Expand Line Selection' });
  await expect(expand).toHaveCount(1);
  await expect(expand).not.toContainText('Ctrl');
  await page.keyboard.press('Control+a');
  await page.keyboard.type('>Agent Panel');
  const agent = palette.locator('.monaco-list-row', { hasText: 'Open or Close the Agent Panel' });
  await expect(agent.locator('.monaco-keybinding')).toContainText(/Ctrl\s*\+?\s*L/);
  expect(errors).toEqual([]);
});
