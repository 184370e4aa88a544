import { expect, test, type APIRequestContext } from '@playwright/test';
import { createDemoWorkspace, editorText, openFile, openWorkspace, screenshotDir, shareLink } from './helpers';

const controlUrl = `http://127.0.0.1:${Number(process.env.E2E_PORT ?? 4173) + 1}/script`;

async function scriptModel(request: APIRequestContext, script: { text: string; tokensPerSecond: number; chunkChars: number }) {
  const res = await request.post(controlUrl, { data: script });
  expect(res.status()).toBe(204);
}

test('at 5 tokens/s a rewrite that shares nothing with the original shows as it arrives, for the collaborator too', async ({ browser, request }) => {
  const ownerLink = await createDemoWorkspace(request);
  const alice = await (await browser.newContext()).newPage();
  await openWorkspace(alice, ownerLink, 'Alice');
  const editorLink = await shareLink(alice, 'editor');
  const bob = await (await browser.newContext()).newPage();
  await openWorkspace(bob, editorLink, 'Bob');
  await openFile(alice, 'src/format.ts');
  await openFile(bob, 'src/format.ts');

  // Three lines, none like the line they replace: the stream-diff cannot align them before the
  // end, so without provisional text nothing would show until the stream finished (~9 s).
  await scriptModel(request, { text: '  const q = 7;\n  const r = q * 6;\n  return `${q}${r}`;', tokensPerSecond: 5, chunkChars: 3 });
  await alice.locator('[data-testid="editor"] .view-line', { hasText: 'Nothing to do.' }).first().click();
  await alice.keyboard.press('End');
  await alice.keyboard.press('Control+k');
  await alice.getByTestId('inline-prompt').fill('rewrite the empty case');
  await alice.getByTestId('inline-prompt').press('Enter');

  // Bob sees the first line while the model is still writing (provisional text is drawn in place).
  await expect(editorText(bob)).toContainText('const q = 7;');
  await expect(alice.getByTestId('hud-status')).toContainText('streaming');
  await expect(bob.locator('.flint-provisional').first()).toBeVisible();
  await bob.screenshot({ path: `${screenshotDir}/slow-stream-provisional-bob.png` });

  // Then the finished rewrite, committed, and nothing provisional left.
  await expect(alice.getByTestId('hud-status')).toContainText('done', { timeout: 20_000 });
  await expect(editorText(bob)).toContainText('return `${q}${r}`;');
  await expect(bob.locator('.flint-provisional')).toHaveCount(0);
});
