import { expect, type Page } from '@playwright/test';
import { test } from '@playwright/test';
import { createDemoWorkspace, openWorkspace, pageErrors, screenshotDir, shareLink } from './helpers';

/** The text a terminal view shows (xterm's rows). */
function terminalText(page: Page) {
  return page.locator('[data-testid="terminal-view"] .xterm-rows');
}

/** Each page draws terminals with the DOM (the GPU setting off), so their text can be read. */
async function domTerminal(page: Page): Promise<Page> {
  await page.addInitScript(() => localStorage.setItem('flint.terminalGpu', 'off'));
  return page;
}

async function typeInTerminal(page: Page, text: string): Promise<void> {
  await page.locator('[data-testid="terminal-view"]').click();
  await page.keyboard.type(text);
  await page.keyboard.press('Enter');
}

test('a shared terminal: Alice runs a command, Bob watches live, types once she lets him; a viewer cannot type', async ({ browser, request }) => {
  const ownerLink = await createDemoWorkspace(request);
  const alice = await domTerminal(await (await browser.newContext()).newPage());
  const aliceErrors = pageErrors(alice);
  await openWorkspace(alice, ownerLink, 'Alice');
  const editorLink = await shareLink(alice, 'editor');
  const viewerLink = await shareLink(alice, 'viewer');

  // Ctrl+` opens the panel, and the owner's first one opens a shell in the demo project.
  await alice.keyboard.press('Control+Backquote');
  await expect(alice.getByTestId('terminal-view')).toBeVisible();
  await expect(alice.getByTestId('terminal-view')).toHaveAttribute('data-may-type', 'true');
  await typeInTerminal(alice, 'ls src; echo "sum=$((6*7))"');
  await expect(terminalText(alice)).toContainText('sum=42');
  await expect(terminalText(alice)).toContainText('format.ts');

  // Bob joins late: he gets the screen as it is, then the output live.
  const bob = await domTerminal(await (await browser.newContext()).newPage());
  const bobErrors = pageErrors(bob);
  await openWorkspace(bob, editorLink, 'Bob');
  await bob.keyboard.press('Control+Backquote');
  await expect(terminalText(bob)).toContainText('sum=42');
  await expect(bob.getByTestId('terminal-view')).toHaveAttribute('data-may-type', 'false');
  await typeInTerminal(alice, 'echo "live=$((40+2))"');
  await expect(terminalText(bob)).toContainText('live=42');

  // Bob types before he may: nothing reaches the shell.
  await typeInTerminal(bob, 'echo "early=$((1+1))"');
  await typeInTerminal(alice, 'echo "after-early=$((2+2))"');
  await expect(terminalText(alice)).toContainText('after-early=4');
  await expect(terminalText(alice)).not.toContainText('early=2');

  // Alice lets Bob type; Bob types; everyone sees it, with his name.
  await alice.getByRole('button', { name: 'Who may type' }).click();
  // The box shows what the gateway granted (it is checked once the grant comes back).
  await alice.getByLabel('Bob may type').click();
  await expect(alice.getByLabel('Bob may type')).toBeChecked();
  await expect(bob.getByTestId('terminal-view')).toHaveAttribute('data-may-type', 'true');
  await alice.keyboard.press('Escape');
  await typeInTerminal(bob, 'echo "bob=$((3+3))"');
  await expect(terminalText(alice)).toContainText('bob=6');
  await expect(alice.getByTestId('terminal-typist')).toContainText('Bob');

  // A viewer watches; whatever it types goes nowhere.
  const vera = await domTerminal(await (await browser.newContext()).newPage());
  const veraErrors = pageErrors(vera);
  await openWorkspace(vera, viewerLink, 'Vera');
  await vera.keyboard.press('Control+Backquote');
  await expect(terminalText(vera)).toContainText('bob=6');
  await typeInTerminal(vera, 'echo "vera=$((4+4))"');
  await typeInTerminal(alice, 'echo "last=$((5+5))"');
  await expect(terminalText(vera)).toContainText('last=10');
  await expect(terminalText(alice)).not.toContainText('vera=8');

  // In the terminal the shell gets its keys: Ctrl+L clears the screen, it does not open the agent panel.
  const agentPanelOpen = await alice.getByTestId('agent-panel').isVisible();
  await alice.locator('[data-testid="terminal-view"]').click();
  await alice.keyboard.press('Control+KeyL');
  await expect(terminalText(alice)).not.toContainText('last=10');
  expect(await alice.getByTestId('agent-panel').isVisible()).toBe(agentPanelOpen);

  // Check runs the project's check (npm test; the demo has no test script, so it fails) for everyone.
  await bob.getByTestId('status-check').click();
  await expect(alice.getByTestId('status-check')).toContainText('Check failed');
  await expect(terminalText(bob)).toContainText('Missing script');

  await alice.screenshot({ path: `${screenshotDir}/terminal-alice.png` });
  await bob.screenshot({ path: `${screenshotDir}/terminal-bob.png` });
  expect([...aliceErrors, ...bobErrors, ...veraErrors]).toEqual([]);
});

test('[P48] output with a huge insert-lines count leaves a watching page responsive', async ({ browser, request }) => {
  const ownerLink = await createDemoWorkspace(request);
  const alice = await domTerminal(await (await browser.newContext()).newPage());
  const aliceErrors = pageErrors(alice);
  await openWorkspace(alice, ownerLink, 'Alice');
  const viewerLink = await shareLink(alice, 'viewer');
  await alice.keyboard.press('Control+Backquote');
  await expect(alice.getByTestId('terminal-view')).toHaveAttribute('data-may-type', 'true');

  const vera = await domTerminal(await (await browser.newContext()).newPage());
  const veraErrors = pageErrors(vera);
  await openWorkspace(vera, viewerLink, 'Vera');
  await vera.keyboard.press('Control+Backquote');
  await expect(vera.getByTestId('terminal-view')).toBeVisible();

  // Unclamped, xterm.js inserted 99,999,999 lines one by one: the page stopped answering.
  await typeInTerminal(alice, `printf '\\e[99999999L\\e[99999999@\\e[2147483647;2147483647r\\n'; echo "hostile=$((20+1))"`);
  await expect(terminalText(vera)).toContainText('hostile=21');
  // The page still answers, and keeps up with what follows.
  expect(await vera.evaluate(() => document.title.length >= 0)).toBe(true);
  await typeInTerminal(alice, 'echo "after=$((40+2))"');
  await expect(terminalText(vera)).toContainText('after=42');
  await expect(terminalText(alice)).toContainText('after=42');
  expect([...aliceErrors, ...veraErrors]).toEqual([]);
});
