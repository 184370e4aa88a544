import { expect, test } from '@playwright/test';
import { createDemoWorkspace, editorText, openFile, openWorkspace, screenshotDir, shareLink, typeAtTop } from './helpers';

test('two people on a shared editor link see each other\'s text, cursors and presence; reload keeps it', async ({ browser, request }) => {
  const ownerLink = await createDemoWorkspace(request);
  const alice = await (await browser.newContext()).newPage();
  await openWorkspace(alice, ownerLink, 'Alice');
  await expect(alice.getByTestId('role-badge')).toContainText('Owner');
  const editorLink = await shareLink(alice, 'editor');

  const bob = await (await browser.newContext()).newPage();
  await openWorkspace(bob, editorLink, 'Bob');
  await expect(bob.getByTestId('role-badge')).toContainText('Editor');

  await openFile(alice, 'src/index.ts');
  await openFile(bob, 'src/index.ts');
  await typeAtTop(alice, '// ALICE_WAS_HERE');
  await expect(editorText(bob)).toContainText('ALICE_WAS_HERE');
  await typeAtTop(bob, '// BOB_WAS_HERE');
  await expect(editorText(alice)).toContainText('BOB_WAS_HERE');

  // Each sees the other in the presence list and the other's cursor in the editor.
  await expect(alice.locator('[data-testid="presence-item"][data-name="Bob"]')).toBeVisible();
  await expect(bob.locator('[data-testid="presence-item"][data-name="Alice"]')).toBeVisible();
  await expect(alice.locator('[class*="yRemoteSelectionHead-"]')).toHaveCount(1);
  await expect(bob.locator('[class*="yRemoteSelectionHead-"]')).toHaveCount(1);

  await alice.screenshot({ path: `${screenshotDir}/collab-alice.png` });
  await bob.screenshot({ path: `${screenshotDir}/collab-bob.png` });

  await bob.reload();
  await expect(bob.getByTestId('status-connection')).toContainText('Connected');
  await openFile(bob, 'src/index.ts');
  await expect(editorText(bob)).toContainText('ALICE_WAS_HERE');
  await expect(editorText(bob)).toContainText('BOB_WAS_HERE');
});

test('a viewer sees edits live but cannot type, and the UI says so', async ({ browser, request }) => {
  const ownerLink = await createDemoWorkspace(request);
  const owner = await (await browser.newContext()).newPage();
  await openWorkspace(owner, ownerLink, 'Owner');
  const viewerLink = await shareLink(owner, 'viewer');

  const viewer = await (await browser.newContext()).newPage();
  await openWorkspace(viewer, viewerLink, 'Vera');
  await expect(viewer.getByTestId('role-badge')).toContainText('Viewer');
  await expect(viewer.getByTestId('share-button')).toHaveCount(0);

  await openFile(owner, 'src/format.ts');
  await openFile(viewer, 'src/format.ts');
  await typeAtTop(owner, '// OWNER_LIVE_EDIT');
  await expect(editorText(viewer)).toContainText('OWNER_LIVE_EDIT');

  await typeAtTop(viewer, '// VIEWER_SHOULD_NOT_APPEAR');
  await expect(viewer.getByTestId('status-connection')).toContainText('Connected');
  await typeAtTop(owner, '// SECOND_OWNER_EDIT');
  await expect(editorText(viewer)).toContainText('SECOND_OWNER_EDIT');
  await expect(editorText(owner)).not.toContainText('VIEWER_SHOULD_NOT_APPEAR');
  await expect(editorText(viewer)).not.toContainText('VIEWER_SHOULD_NOT_APPEAR');
  await viewer.screenshot({ path: `${screenshotDir}/viewer.png` });
});

test('revoking a link disconnects its sessions at once with a clear message', async ({ browser, request }) => {
  const ownerLink = await createDemoWorkspace(request);
  const owner = await (await browser.newContext()).newPage();
  await openWorkspace(owner, ownerLink, 'Owner');
  const editorLink = await shareLink(owner, 'editor');
  const guest = await (await browser.newContext()).newPage();
  await openWorkspace(guest, editorLink, 'Guest');

  await owner.getByTestId('share-button').click();
  const rows = owner.locator('[data-testid="link-row"][data-role="editor"]');
  await expect(rows).toHaveCount(1);
  owner.once('dialog', (dialog) => void dialog.accept());
  await rows.getByTestId('revoke-link').click();
  await expect(rows).toHaveCount(0);

  await expect(guest.getByTestId('closed-banner')).toContainText('revoked');
  await guest.screenshot({ path: `${screenshotDir}/revoked.png` });
});
