import { expect, test, type APIRequestContext, type Browser, type Page } from '@playwright/test';
import { demoWorkspaceFiles } from '@flint/gateway';
import { createDemoWorkspace, editorText, openFile, openWorkspace, screenshotDir, shareLink } from './helpers';

/**
 * The agent thread (issue 23, ARCHITECTURE "How the agent thread works", SPEC [P30]–[P34]):
 * the panel, two browsers, the real gateway, and the loopback fake model answering with
 * apply_patch calls that stream into the demo workspace's files.
 */

const scriptOnceUrl = `http://127.0.0.1:${Number(process.env.E2E_PORT ?? 4173) + 1}/script-once`;

interface Answer {
  text: string;
  chunkChars?: number;
  tokensPerSecond?: number;
  toolCalls?: Array<{ name: string; arguments: string }>;
}

/** The model's next answers, in order: one per model call of the turn (a tool loop calls it again after each tool). */
async function scriptAnswers(request: APIRequestContext, answers: Answer[]): Promise<void> {
  const res = await request.post(scriptOnceUrl, { data: answers });
  expect(res.status()).toBe(204);
}

const applyPatch = (patch: string) => ({ name: 'apply_patch', arguments: JSON.stringify({ patch }) });

/** Two files of the demo workspace: a field on Task, and the list showing it. Hunks match demoWorkspace.ts. */
const dueDatePatch = `*** Begin Patch
*** Update File: src/model/task.ts
@@ export interface Task {
   priority: Priority;
   createdAt: Date;
+  /** When the task must be done by, if it has a deadline. */
+  dueDate?: Date;
 }
*** Update File: src/format.ts
@@
 const marks = { high: '!!', normal: ' !', low: '  ' } as const;
 
+/** A due date as the list shows it: the day, in ISO form. */
+function formatDue(due: Date | undefined): string {
+  return due ? \` (due \${due.toISOString().slice(0, 10)})\` : '';
+}
+
 export function formatTask(task: Task): string {
   const box = task.done ? '[x]' : '[ ]';
-  return \`\${box} \${marks[task.priority]} #\${task.id} \${task.title}\`;
+  return \`\${box} \${marks[task.priority]} #\${task.id} \${task.title}\${formatDue(task.dueDate)}\`;
 }
*** End Patch
`;

const ask = 'Give tasks an optional due date and show it in the list.';

async function twoBrowsers(browser: Browser, request: APIRequestContext): Promise<{ alice: Page; bob: Page }> {
  const ownerLink = await createDemoWorkspace(request);
  const alice = await (await browser.newContext()).newPage();
  await probeEditor(alice);
  await openWorkspace(alice, ownerLink, 'Alice');
  const editorLink = await shareLink(alice, 'editor');
  const bob = await (await browser.newContext()).newPage();
  await probeEditor(bob);
  await openWorkspace(bob, editorLink, 'Bob');
  return { alice, bob };
}

/** Keeps the page's Monaco editor (the app's optional probe hook), to read its exact text. */
async function probeEditor(page: Page): Promise<void> {
  await page.addInitScript(() => {
    (window as unknown as { __FLINT_EDITOR_PROBE__: (e: unknown) => void }).__FLINT_EDITOR_PROBE__ = (e) => ((window as unknown as { __editor: unknown }).__editor = e);
  });
}

const editorValue = (page: Page) => page.evaluate(() => (window as unknown as { __editor: { getValue(): string } }).__editor.getValue());

/** Ctrl-L for one, the top-bar button for the other: both open the panel; it is ready once the thread synced. */
async function openPanel(page: Page, by: 'shortcut' | 'button'): Promise<void> {
  if (by === 'shortcut') await page.keyboard.press('Control+l');
  else await page.getByTestId('agent-panel-toggle').click();
  await expect(page.getByTestId('agent-panel')).toHaveAttribute('data-synced', 'true');
}

async function sendInPanel(page: Page, text: string, key: 'Enter' | 'Alt+Enter' = 'Enter'): Promise<void> {
  const input = page.getByTestId('thread-input');
  await input.fill(text);
  await input.press(key);
  await expect(input).toHaveValue('');
}

const turns = (page: Page) => page.getByTestId('thread-turn');
const fileRow = (page: Page, path: string) => page.locator(`[data-testid="thread-file"][data-path="${path}"]`);
const assistant = (page: Page) => page.locator('[data-testid="thread-message"][data-kind="assistant"]');

/**
 * One look at the page, in one evaluation so it all holds at the same instant: whether the last
 * turn is still streaming, whether the editor shows `text`, and the labels of the remote cursors
 * in the editor (y-monaco draws a cursor's name in its head's ::after).
 */
function lookAt(page: Page, text: string): Promise<{ streaming: boolean; shows: boolean; cursors: string[] }> {
  return page.evaluate((wanted) => {
    const all = document.querySelectorAll('[data-testid="thread-turn"]');
    const editor = document.querySelector('[data-testid="editor"]');
    const shown = (editor?.querySelector('.view-lines')?.textContent ?? '').replace(/\u00a0/g, ' ');
    return {
      streaming: all[all.length - 1]?.getAttribute('data-status') === 'streaming',
      shows: shown.includes(wanted),
      cursors: [...(editor?.querySelectorAll('[class*="yRemoteSelectionHead-"]') ?? [])].map((head) => getComputedStyle(head, '::after').content),
    };
  }, text);
}

const streamingWhileEditorShows = async (page: Page, text: string) => {
  const seen = await lookAt(page, text);
  return seen.streaming && seen.shows;
};

const agentCursor = '"✦ fake-spark (AI)"';

test('a two-file turn streams into a collaborator\'s editor with the agent\'s cursor; its files are listed with counts and open from the panel', async ({ browser, request }) => {
  const { alice, bob } = await twoBrowsers(browser, request);
  await openFile(bob, 'src/format.ts');
  await openPanel(alice, 'shortcut');
  await openPanel(bob, 'button');

  await scriptAnswers(request, [
    { text: 'I will add an optional `dueDate` to `Task` and show it in `formatTask`.', chunkChars: 3, tokensPerSecond: 60, toolCalls: [applyPatch(dueDatePatch)] },
    { text: 'Done: tasks can carry a `dueDate`, and the list prints it after the title as “(due 2025-01-31)”.', chunkChars: 3, tokensPerSecond: 60 },
  ]);
  await sendInPanel(alice, ask);

  // Bob's panel shows Alice's message, the answer and the edit step while it streams.
  await expect(bob.locator('[data-testid="thread-message"][data-kind="user"]')).toContainText(ask);
  await expect(bob.locator('[data-testid="thread-message"][data-kind="user"]')).toContainText('Alice');
  await expect(assistant(bob).first()).toContainText('I will add an optional');

  // The added lines reach Bob's editor while the turn still streams, under the agent's labelled cursor.
  await expect.poll(() => lookAt(bob, 'function formatDue('), { intervals: [50] }).toEqual({ streaming: true, shows: true, cursors: expect.arrayContaining([agentCursor]) });
  await expect(fileRow(bob, 'src/model/task.ts')).toBeVisible();
  await expect(fileRow(bob, 'src/format.ts')).toBeVisible();
  await bob.screenshot({ path: `${screenshotDir}/agent-thread-streaming-bob.png` });

  await expect(turns(bob)).toHaveAttribute('data-status', 'done', { timeout: 20_000 });
  await expect(assistant(bob).last()).toContainText('the list prints it after the title');
  await expect(bob.getByTestId('thread-tool-step')).toHaveAttribute('data-status', 'done');
  await expect(bob.getByTestId('thread-tool-step')).toContainText('edited 2 files +8 −1');
  await expect(editorText(bob)).toContainText('${formatDue(task.dueDate)}');
  // The agent's cursor is gone once it stops writing.
  await expect.poll(async () => (await lookAt(bob, '')).cursors).not.toContain(agentCursor);

  await expect(fileRow(bob, 'src/model/task.ts').locator('.thread-file-counts')).toHaveText('+2 −0');
  await expect(fileRow(bob, 'src/format.ts').locator('.thread-file-counts')).toHaveText('+6 −1');
  await expect(fileRow(alice, 'src/format.ts').locator('.thread-file-counts')).toHaveText('+6 −1');
  await expect(turns(bob).getByTestId('thread-turn-accept')).toBeEnabled();

  // A file row opens its file.
  await fileRow(bob, 'src/model/task.ts').locator('.thread-file-open').click();
  await expect(bob.locator('[data-testid="tab"][data-path="src/model/task.ts"]')).toHaveAttribute('aria-selected', 'true');
  await expect(editorText(bob)).toContainText('dueDate?: Date;');
  await expect.poll(() => editorValue(bob)).toContain('  createdAt: Date;\n  /** When the task must be done by, if it has a deadline. */\n  dueDate?: Date;\n}');
  await bob.screenshot({ path: `${screenshotDir}/agent-thread-done-bob.png` });
});

test('a message sent while the agent writes steers it: what it wrote stays, it continues; Alt-Enter queues one for after the turn', async ({ browser, request }) => {
  const { alice, bob } = await twoBrowsers(browser, request);
  await openFile(bob, 'src/model/task.ts');
  await openPanel(alice, 'shortcut');
  await openPanel(bob, 'button');

  const steer = 'Only the Task interface for now, leave format.ts alone.';
  const queued = 'Then add a test for the due date.';
  await scriptAnswers(request, [
    // Slow enough that the patch is still being written when the steer and the queued message arrive.
    { text: 'Adding the field first.', chunkChars: 3, tokensPerSecond: 30, toolCalls: [applyPatch(dueDatePatch)] },
    { text: 'Understood, Bob: I keep what I wrote in `task.ts` and am going no further.', chunkChars: 3, tokensPerSecond: 25 },
    { text: 'A test for the due date would go in a new `src/format.test.ts`.', chunkChars: 4, tokensPerSecond: 200 },
  ]);
  await sendInPanel(alice, ask);

  // While the turn streams, Alt-Enter queues a message instead of steering.
  await expect(alice.getByTestId('thread-send')).toHaveAttribute('data-action', 'steer');
  await sendInPanel(alice, queued, 'Alt+Enter');
  const queuedMessage = alice.locator('[data-testid="thread-message"][data-kind="user"]', { hasText: queued });
  await expect(queuedMessage).toHaveAttribute('data-queued', 'true');
  await expect(queuedMessage).toContainText('queued');
  await expect(bob.locator('[data-testid="thread-message"][data-queued="true"]')).toContainText(queued);

  // The patch has begun in task.ts: Bob sees its first added line in his editor, and steers.
  await expect.poll(() => streamingWhileEditorShows(bob, '/** When the'), { intervals: [50] }).toBe(true);
  await expect(bob.getByTestId('thread-send')).toHaveAttribute('data-action', 'steer');
  await sendInPanel(bob, steer);
  const steerMessage = alice.locator('[data-testid="thread-message"][data-kind="user"]', { hasText: steer });
  await expect(steerMessage.locator('.thread-tag--steer')).toHaveText('steered');
  await expect(steerMessage.locator('.thread-msg-author')).toHaveText('Bob');
  // The steer belongs to the running turn, not a new one, and the model continues that turn.
  const firstTurn = alice.locator('section[data-turn]').first();
  await expect(firstTurn.locator('[data-testid="thread-message"]', { hasText: steer })).toBeVisible();
  await expect(firstTurn.locator('[data-testid="thread-message"][data-kind="assistant"]').last()).toContainText('Understood, Bob');
  await alice.screenshot({ path: `${screenshotDir}/agent-thread-steered-alice.png` });

  await expect(firstTurn.getByTestId('thread-turn')).toHaveAttribute('data-status', 'done', { timeout: 20_000 });
  await expect(firstTurn.locator('[data-testid="thread-message"][data-kind="assistant"]').last()).toContainText('going no further');
  await expect(alice.getByTestId('thread-tool-step').first()).toContainText('(interrupted)');
  // The patch stopped where the steer cut it; what it had written stays in the file, for review.
  await expect.poll(() => editorValue(bob)).toContain('  createdAt: Date;\n  /** When the');
  await expect(fileRow(bob, 'src/model/task.ts')).toHaveAttribute('data-review', 'pending');

  // The queued message starts the next turn once the first ends.
  await expect(turns(alice)).toHaveCount(2);
  await expect(alice.locator('[data-testid="thread-message"][data-queued="true"]')).toHaveCount(0);
  await expect(turns(alice).nth(1)).toHaveAttribute('data-status', 'done', { timeout: 20_000 });
  await expect(assistant(alice).last()).toContainText('A test for the due date');
  await expect(assistant(bob).last()).toContainText('A test for the due date');
  await alice.screenshot({ path: `${screenshotDir}/agent-thread-after-queue-alice.png` });
});

test('per-file review from the panel: a rejected file is exactly its original again for everyone, an accepted one keeps the change', async ({ browser, request }) => {
  const { alice, bob } = await twoBrowsers(browser, request);
  await openFile(alice, 'src/format.ts');
  await openFile(bob, 'src/format.ts');
  await openPanel(alice, 'shortcut');
  await openPanel(bob, 'button');

  await scriptAnswers(request, [
    { text: 'Adding `dueDate` and showing it.', chunkChars: 4, tokensPerSecond: 400, toolCalls: [applyPatch(dueDatePatch)] },
    { text: 'Both files are updated.', chunkChars: 4, tokensPerSecond: 400 },
  ]);
  await sendInPanel(alice, ask);
  await expect(turns(bob)).toHaveAttribute('data-status', 'done', { timeout: 20_000 });
  await expect(editorText(bob)).toContainText('function formatDue(');
  await expect(fileRow(bob, 'src/format.ts')).toHaveAttribute('data-review', 'pending');

  await fileRow(bob, 'src/format.ts').getByTestId('thread-file-reject').click();
  await fileRow(bob, 'src/model/task.ts').getByTestId('thread-file-accept').click();
  await expect(fileRow(bob, 'src/format.ts')).toHaveAttribute('data-review', 'rejected');
  await expect(fileRow(bob, 'src/model/task.ts')).toHaveAttribute('data-review', 'accepted');
  await expect(fileRow(bob, 'src/format.ts')).toContainText('rejected');
  await expect(fileRow(bob, 'src/model/task.ts')).toContainText('accepted');
  // Nothing is left to review in this turn.
  await expect(turns(bob).getByTestId('thread-turn-accept')).toHaveCount(0);

  // The rejected file is back to the seed, character for character, in both browsers.
  for (const page of [alice, bob]) {
    await expect.poll(() => editorValue(page)).toBe(demoWorkspaceFiles['src/format.ts']);
    await expect(page.locator('.flint-removed')).toHaveCount(0);
  }
  // The accepted one keeps the change, in both.
  for (const page of [alice, bob]) {
    await openFile(page, 'src/model/task.ts');
    await expect.poll(() => editorValue(page)).toContain('  dueDate?: Date;\n}');
    await expect(page.locator('.flint-inserted')).toHaveCount(0);
  }
  // Alice's panel knows the review too, now that she has both files.
  await expect(fileRow(alice, 'src/format.ts')).toHaveAttribute('data-review', 'rejected');
  await expect(fileRow(alice, 'src/model/task.ts')).toHaveAttribute('data-review', 'accepted');
  await bob.screenshot({ path: `${screenshotDir}/agent-thread-review-bob.png` });
});

test('a viewer watches the thread live but has no input and cannot review', async ({ browser, request }) => {
  const ownerLink = await createDemoWorkspace(request);
  const owner = await (await browser.newContext()).newPage();
  await openWorkspace(owner, ownerLink, 'Owner');
  const viewerLink = await shareLink(owner, 'viewer');
  const viewer = await (await browser.newContext()).newPage();
  await openWorkspace(viewer, viewerLink, 'Vera');
  await openFile(viewer, 'src/format.ts');
  await openPanel(owner, 'shortcut');
  await openPanel(viewer, 'button');

  await expect(viewer.getByTestId('thread-viewer-note')).toBeVisible();
  await expect(viewer.getByTestId('thread-input')).toHaveCount(0);
  await expect(viewer.getByTestId('thread-send')).toHaveCount(0);

  await scriptAnswers(request, [
    { text: 'Adding the field, then the list.', chunkChars: 3, tokensPerSecond: 60, toolCalls: [applyPatch(dueDatePatch)] },
    { text: 'Done: the list shows due dates.', chunkChars: 3, tokensPerSecond: 60 },
  ]);
  await sendInPanel(owner, ask);

  // The viewer sees the turn while it streams: the message, the answer, the files it edits, and the edit in the editor.
  await expect(viewer.locator('[data-testid="thread-message"][data-kind="user"]')).toContainText(ask);
  await expect(assistant(viewer).first()).toContainText('Adding the field');
  await expect.poll(() => streamingWhileEditorShows(viewer, 'function formatDue('), { intervals: [50] }).toBe(true);
  await expect(fileRow(viewer, 'src/format.ts')).toBeVisible();
  await viewer.screenshot({ path: `${screenshotDir}/agent-thread-viewer-streaming.png` });
  await expect(turns(viewer)).toHaveAttribute('data-status', 'done', { timeout: 20_000 });
  await expect(assistant(viewer).last()).toContainText('the list shows due dates');
  await expect(fileRow(viewer, 'src/format.ts')).toBeVisible();
  await expect(fileRow(viewer, 'src/model/task.ts')).toBeVisible();

  // Watching only: the review buttons are there but disabled, and there is still no input.
  await expect(turns(viewer).getByTestId('thread-turn-accept')).toBeDisabled();
  await expect(turns(viewer).getByTestId('thread-turn-reject')).toBeDisabled();
  await expect(fileRow(viewer, 'src/format.ts').getByTestId('thread-file-reject')).toBeDisabled();
  await expect(viewer.getByTestId('thread-input')).toHaveCount(0);
  await expect(viewer.getByTestId('thread-viewer-note')).toContainText('You are viewing');
  await expect(turns(owner).getByTestId('thread-turn-accept')).toBeEnabled();
});
