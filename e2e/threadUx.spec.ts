import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { createDemoWorkspace, editorText, openFile, openWorkspace, screenshotDir, watchedPage } from './helpers';

/**
 * What the agent leaves on screen (issue 33, items 4 and 8): no false problems after a turn that
 * adds a file, review buttons and the agent's label that leave the code readable, a panel hint
 * that fits, and no uncaught error from Monaco's cancellations (any `pageerror` fails a test).
 */

const control = `http://127.0.0.1:${Number(process.env.E2E_PORT ?? 4173) + 1}`;

interface Answer {
  text: string;
  chunkChars?: number;
  tokensPerSecond?: number;
  toolCalls?: Array<{ name: string; arguments: string }>;
}

async function script(request: APIRequestContext, path: '/script' | '/script-once' | '/script-complete', body: unknown): Promise<void> {
  const res = await request.post(`${control}${path}`, { data: body });
  expect(res.status()).toBe(204);
}

const pageErrors: string[] = [];
test.beforeEach(() => {
  pageErrors.length = 0;
});
test.afterEach(async ({ request }) => {
  await script(request, '/script-complete', { text: '' });
  expect(pageErrors).toEqual([]);
});

const applyPatch = (patch: string) => ({ name: 'apply_patch', arguments: JSON.stringify({ patch }) });

/** A new module, and format.ts importing it: the import resolves only if the worker knows the new file. */
const newModulePatch = `*** Begin Patch
*** Add File: src/dueDate.ts
+/** A due date as the list shows it: the day, in ISO form. */
+export function formatDue(due: Date | undefined): string {
+  return due ? \` (due \${due.toISOString().slice(0, 10)})\` : '';
+}
*** Update File: src/format.ts
@@
 import type { Task } from './model/task';
+import { formatDue } from './dueDate';
 
 const marks = { high: '!!', normal: ' !', low: '  ' } as const;
@@
 export function formatTask(task: Task): string {
   const box = task.done ? '[x]' : '[ ]';
-  return \`\${box} \${marks[task.priority]} #\${task.id} \${task.title}\`;
+  return \`\${box} \${marks[task.priority]} #\${task.id} \${task.title}\${formatDue(undefined)}\`;
 }
*** End Patch
`;

/** Rectangles that overlap, in page pixels. */
interface Overlap {
  widget: string;
  text: string;
}

/** Text of the editor's lines (code and the struck-through removed text) that a hunk's ✓ ✕ buttons sit on. */
function textUnderHunkButtons(page: Page): Promise<Overlap[]> {
  return page.evaluate(() => {
    const editor = document.querySelector('[data-testid="editor"]')!;
    const spans = [...editor.querySelectorAll('.view-lines .view-line span span')].filter((span) => (span.textContent ?? '').trim() !== '');
    const overlaps: Array<{ widget: string; text: string }> = [];
    for (const widget of editor.querySelectorAll('.flint-hunk-actions')) {
      const w = widget.getBoundingClientRect();
      for (const span of spans) {
        const s = span.getBoundingClientRect();
        if (s.width > 0 && w.left < s.right && s.left < w.right && w.top < s.bottom && s.top < w.bottom) overlaps.push({ widget: widget.textContent ?? '', text: span.textContent ?? '' });
      }
    }
    return overlaps;
  });
}

/** Whether the panel input's shortcut hint shows all of its text (not cut off with an ellipsis). */
function hintFits(page: Page): Promise<{ text: string; fits: boolean }> {
  return page.getByTestId('thread-input-hint').evaluate((hint) => {
    const parts = [hint, ...hint.querySelectorAll('*')];
    return { text: hint.textContent ?? '', fits: parts.every((el) => el.scrollWidth <= el.clientWidth + 1) };
  });
}

/** The agent's cursor in the editor: its label and whether it shows, at one instant with the turn's status. */
function agentLabel(page: Page): Promise<{ streaming: boolean; label: string | null; opacity: string | null }> {
  return page.evaluate(() => {
    const turns = document.querySelectorAll('[data-testid="thread-turn"]');
    const heads = [...document.querySelectorAll('[data-testid="editor"] [class*="yRemoteSelectionHead-"]')].filter((head) => getComputedStyle(head, '::after').content.includes('✦'));
    const after = heads[0] ? getComputedStyle(heads[0], '::after') : null;
    return { streaming: turns[turns.length - 1]?.getAttribute('data-status') === 'streaming', label: after?.content ?? null, opacity: after?.opacity ?? null };
  });
}

test('a turn that adds a module and imports it leaves no false problem; review buttons and the panel hint cover nothing', async ({ browser, request }) => {
  const page = await watchedPage(browser, pageErrors);
  await openWorkspace(page, await createDemoWorkspace(request), 'Alice');
  await openFile(page, 'src/format.ts');
  await page.keyboard.press('Control+l');
  await expect(page.getByTestId('agent-panel')).toHaveAttribute('data-synced', 'true');
  await expect(page.getByTestId('thread-input-hint')).toContainText('queue');
  expect(await hintFits(page)).toMatchObject({ fits: true });

  await script(request, '/script-once', [
    { text: 'I will put the due date formatting in its own module and use it in `formatTask`.', chunkChars: 3, tokensPerSecond: 25, toolCalls: [applyPatch(newModulePatch)] },
    { text: 'Done: `src/dueDate.ts` formats the date, `formatTask` prints it.', chunkChars: 4, tokensPerSecond: 200 },
  ] satisfies Answer[]);
  const input = page.getByTestId('thread-input');
  await input.fill('Move the due date formatting into its own module.');
  await input.press('Enter');

  // While the agent writes, the input offers steer, queue and stop: the hint says all three, in full.
  await expect(page.getByTestId('thread-send')).toHaveAttribute('data-action', 'steer');
  await expect(page.getByTestId('thread-input-hint')).toContainText('stop');
  expect(await hintFits(page)).toEqual({ text: expect.stringMatching(/steer.*queue.*stop/), fits: true });
  await page.getByTestId('agent-panel').screenshot({ path: `${screenshotDir}/thread-ux-panel-streaming.png` });

  // The agent's name shows on its cursor for the whole turn (issue 38): its writing never passes
  // for a person's.
  await expect.poll(() => agentLabel(page), { intervals: [50] }).toEqual({ streaming: true, label: '"✦ fake-spark (AI)"', opacity: '1' });
  await page.locator('[data-testid="editor"]').screenshot({ path: `${screenshotDir}/thread-ux-editor-streaming.png` });

  const turn = page.getByTestId('thread-turn');
  await expect(turn).toHaveAttribute('data-status', 'done', { timeout: 30_000 });
  await expect(editorText(page)).toContainText("import { formatDue } from './dueDate';");

  // TypeScript knows the new module at once: no "Cannot find module", in the pill or the status bar.
  await expect(page.getByTestId('review-problems-none')).toBeVisible({ timeout: 15_000 });
  await expect(page.getByTestId('review-problems-added')).toHaveCount(0);
  await expect(page.locator('.status-problems')).toHaveAccessibleName('0 errors, 0 warnings');
  await expect(page.locator('[data-testid="editor"] .squiggly-error')).toHaveCount(0);

  // Each pending hunk has its ✓ ✕, and none of them sits on the code it reviews.
  await expect(page.getByTestId('hunk-accept')).toHaveCount(2);
  await page.locator('[data-testid="editor"]').screenshot({ path: `${screenshotDir}/thread-ux-editor-review.png` });
  await page.screenshot({ path: `${screenshotDir}/thread-ux-after-turn.png` });
  expect(await textUnderHunkButtons(page)).toEqual([]);
});

test('Ctrl-K and ghost-text completion raise no uncaught error when Monaco cancels their requests', async ({ browser, request }) => {
  const page = await watchedPage(browser, pageErrors);
  await openWorkspace(page, await createDemoWorkspace(request), 'Solo');
  await openFile(page, 'src/format.ts');

  // Ctrl-K, then Esc mid-stream: the prompt's requests and Monaco's own are called off.
  await script(request, '/script', { text: '  // a long explanation that never ends\n'.repeat(20), tokensPerSecond: 20, chunkChars: 4 });
  await page.locator('[data-testid="editor"] .view-line', { hasText: 'Nothing to do.' }).first().click();
  await page.keyboard.press('End');
  await page.keyboard.press('Control+k');
  await page.getByTestId('inline-prompt').fill('explain');
  await page.getByTestId('inline-prompt').press('Enter');
  await expect(editorText(page)).toContainText('a long');
  await page.locator('[data-testid="editor"] .view-lines').click();
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('hud-status')).toContainText('stopped');

  // Completion: ghost text comes, then typing past it cancels Monaco's pending inline-completion requests.
  await script(request, '/script-complete', { text: 'formatList([]);', chunkChars: 2 });
  await editorText(page).click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type('const shown = ', { delay: 30 });
  await expect(page.locator('[data-testid="editor"] .ghost-text-decoration, [data-testid="editor"] .ghost-text').first()).toBeVisible();
  await page.keyboard.type('1;', { delay: 30 });
  await page.keyboard.press('Enter');
  await page.keyboard.type('const again = ', { delay: 30 });
  await expect(page.locator('[data-testid="editor"] .ghost-text-decoration, [data-testid="editor"] .ghost-text').first()).toBeVisible();
  await page.keyboard.press('Escape');
  await page.screenshot({ path: `${screenshotDir}/thread-ux-inline.png` });
});
