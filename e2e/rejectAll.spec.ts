import { expect, test, type APIRequestContext, type Browser, type Page } from '@playwright/test';
import { demoWorkspaceFiles } from '@flint/gateway';
import { createDemoWorkspace, openFile, openWorkspace, screenshotDir, shareLink } from './helpers';

/**
 * Review you can trust (issue 33): a turn that patches one file twice and creates another; Bob
 * rejects all from the panel; both browsers show the original tree and text byte for byte. Any
 * page error fails the journey.
 */

const scriptOnceUrl = `http://127.0.0.1:${Number(process.env.E2E_PORT ?? 4173) + 1}/script-once`;

const applyPatch = (patch: string) => ({ name: 'apply_patch', arguments: JSON.stringify({ patch }) });

const addDueDate = `*** Begin Patch
*** Update File: src/model/task.ts
@@ export interface Task {
   priority: Priority;
   createdAt: Date;
+  dueDate?: Date;
 }
*** Add File: src/model/due.ts
+export const isOverdue = (due: Date, now: Date) => due < now;
*** End Patch
`;

const trimTitle = `*** Begin Patch
*** Update File: src/model/task.ts
@@ export function createTask(title: string, priority: Priority = 'normal'): Task {
-  const trimmed = title.trim();
+  const trimmed = title.trim().replace(/\\s+/g, ' ');
   if (trimmed.length === 0) throw new Error('A task needs a title.');
*** End Patch
`;

async function open(browser: Browser, link: string, name: string, errors: string[]): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  page.on('pageerror', (error) => errors.push(`${name}: ${error.message}`));
  await page.addInitScript(() => {
    (window as unknown as { __FLINT_EDITOR_PROBE__: (e: unknown) => void }).__FLINT_EDITOR_PROBE__ = (e) => ((window as unknown as { __editor: unknown }).__editor = e);
  });
  await openWorkspace(page, link, name);
  return page;
}

const editorValue = (page: Page) => page.evaluate(() => (window as unknown as { __editor: { getValue(): string } }).__editor.getValue());
const treeItem = (page: Page, path: string) => page.locator(`[data-testid="tree-item"][data-path="${path}"]`);

async function scriptAnswers(request: APIRequestContext, answers: unknown[]): Promise<void> {
  const res = await request.post(scriptOnceUrl, { data: answers });
  expect(res.status()).toBe(204);
}

test('Bob rejects a turn that patched a file twice and created one: both browsers show the original tree and text', async ({ browser, request }) => {
  const errors: string[] = [];
  const ownerLink = await createDemoWorkspace(request);
  const alice = await open(browser, ownerLink, 'Alice', errors);
  const bob = await open(browser, await shareLink(alice, 'editor'), 'Bob', errors);
  for (const page of [alice, bob]) await openFile(page, 'src/model/task.ts');
  await bob.getByTestId('agent-panel-toggle').click();
  await expect(bob.getByTestId('agent-panel')).toHaveAttribute('data-synced', 'true');

  await scriptAnswers(request, [
    { text: 'Adding a due date.', chunkChars: 4, tokensPerSecond: 200, toolCalls: [applyPatch(addDueDate)] },
    { text: 'And tidying titles.', chunkChars: 4, tokensPerSecond: 200, toolCalls: [applyPatch(trimTitle)] },
    { text: 'Done.', chunkChars: 4, tokensPerSecond: 200 },
  ]);
  const input = bob.getByTestId('thread-input');
  await input.fill('Add a due date and tidy titles.');
  await input.press('Enter');

  const turn = bob.getByTestId('thread-turn');
  await expect(turn).toHaveAttribute('data-status', 'done', { timeout: 20_000 });
  await expect.poll(() => editorValue(alice)).toContain("title.trim().replace(/\\s+/g, ' ')");
  await expect.poll(() => editorValue(alice)).toContain('  dueDate?: Date;\n');
  await expect(treeItem(alice, 'src/model/due.ts')).toBeVisible();
  await bob.screenshot({ path: `${screenshotDir}/reject-all-before-bob.png` });

  await turn.getByTestId('thread-turn-reject').click();

  const original = demoWorkspaceFiles['src/model/task.ts'];
  for (const page of [alice, bob]) {
    await expect.poll(() => editorValue(page)).toBe(original);
    await expect(treeItem(page, 'src/model/due.ts')).toHaveCount(0);
  }
  // The panel reads the review as done, the created file's row included.
  for (const path of ['src/model/task.ts', 'src/model/due.ts']) await expect(bob.locator(`[data-testid="thread-file"][data-path="${path}"]`)).toHaveAttribute('data-review', 'rejected');
  await bob.screenshot({ path: `${screenshotDir}/reject-all-after-bob.png` });

  // One step back for the created file: it comes back whole; rejecting it again takes it away.
  const dueRow = bob.locator('[data-testid="thread-file"][data-path="src/model/due.ts"]');
  await dueRow.getByTestId('thread-file-undo').click();
  for (const page of [alice, bob]) await expect(treeItem(page, 'src/model/due.ts')).toBeVisible();
  await openFile(alice, 'src/model/due.ts');
  await expect.poll(() => editorValue(alice)).toBe('export const isOverdue = (due: Date, now: Date) => due < now;\n');
  await dueRow.getByTestId('thread-file-reject').click();
  for (const page of [alice, bob]) await expect(treeItem(page, 'src/model/due.ts')).toHaveCount(0);
  expect(errors).toEqual([]);
});
