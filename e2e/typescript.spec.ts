import { expect, test } from '@playwright/test';
import { createDemoWorkspace, openFile, openWorkspace, screenshotDir, typeAtTop } from './helpers';

// The IDE runs its own TypeScript worker (incremental parsing, decision 0009): it must check
// the file after each edit exactly as Monaco's would.
test('TypeScript marks an error where it is typed, follows later edits, and clears it once fixed', async ({ page, request }) => {
  await openWorkspace(page, await createDemoWorkspace(request), 'Tess');
  await openFile(page, 'src/format.ts');
  const errors = page.locator('[data-testid="editor"] .squiggly-error');
  await expect(page.locator('[data-testid="editor"] .view-lines')).toContainText('formatTask');
  await expect(errors).toHaveCount(0, { timeout: 15_000 });

  await typeAtTop(page, "const total: number = 'many';");
  await expect(errors).toHaveCount(1, { timeout: 15_000 });
  // More edits around it, each a new version the worker parses from the last one.
  await typeAtTop(page, '// counted below');
  await typeAtTop(page, 'export const unit = 1;');
  await page.screenshot({ path: `${screenshotDir}/typescript-error.png` });

  // The caret is on line 2; the wrong line is line 3 now. Fix its string into a number.
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('End');
  for (let i = 0; i < "'many';".length; i++) await page.keyboard.press('Backspace');
  await page.keyboard.type('unit * 2;');
  await expect(page.locator('[data-testid="editor"] .view-lines')).toContainText('const total: number = unit * 2;');
  await expect(errors).toHaveCount(0, { timeout: 15_000 });
});
