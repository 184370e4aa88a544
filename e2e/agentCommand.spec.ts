import { expect, test, type APIRequestContext } from '@playwright/test';
import { createDemoWorkspace, openWorkspace, screenshotDir, shareLink } from './helpers';

/**
 * The agent's run_command (issue 35, SPEC [P45]) in two browsers with the loopback fake model:
 * it runs the check, an editor the owner lets type approves, it sees the failure, fixes it, runs
 * it again green. Before the owner lets Bob type he sees the request but cannot run it ("may
 * type" is the one capability to run code).
 */
const scriptOnceUrl = `http://127.0.0.1:${Number(process.env.E2E_PORT ?? 4173) + 1}/script-once`;

async function scriptAnswers(request: APIRequestContext, answers: Array<{ text: string; toolCalls?: Array<{ name: string; arguments: string }> }>): Promise<void> {
  const res = await request.post(scriptOnceUrl, { data: answers });
  expect(res.status()).toBe(204);
}

const patch = (body: string) => ({ name: 'apply_patch', arguments: JSON.stringify({ patch: `*** Begin Patch\n${body}*** End Patch\n` }) });
const run = (command: string) => ({ name: 'run_command', arguments: JSON.stringify({ command }) });

test('the agent runs the tests once Bob approves, sees them fail, fixes the code, and runs them green', async ({ browser, request }) => {
  const ownerLink = await createDemoWorkspace(request);
  const alice = await (await browser.newContext()).newPage();
  await openWorkspace(alice, ownerLink, 'Alice');
  const editorLink = await shareLink(alice, 'editor');
  const bob = await (await browser.newContext()).newPage();
  await openWorkspace(bob, editorLink, 'Bob');

  await scriptAnswers(request, [
    {
      text: 'I will add a check and run it.',
      toolCalls: [
        patch('*** Add File: check.sh\n+grep -q fixed status.txt && echo "PASS all green" || { echo "FAIL status.txt:1 expected fixed"; exit 1; }\n*** Add File: status.txt\n+broken\n'),
        run('sh check.sh'),
      ],
    },
    { text: 'It fails on status.txt; fixing it.', toolCalls: [patch('*** Update File: status.txt\n@@\n-broken\n+fixed\n'), run('sh check.sh')] },
    { text: 'All green.' },
  ]);
  await alice.keyboard.press('Control+l');
  const input = alice.getByTestId('thread-input');
  await input.fill('run the tests and fix what fails');
  await input.press('Enter');

  // Ask each time (the default): Bob sees the request, but may not run it until Alice lets him type.
  await expect(bob.getByTestId('command-approval')).toContainText('sh check.sh');
  await expect(bob.getByTestId('command-approval')).toContainText('Waiting for the owner');
  await expect(bob.getByTestId('command-approval').getByRole('button', { name: 'Run' })).toHaveCount(0);
  await expect(bob.getByTestId('status-check')).toBeDisabled();
  await expect(bob.getByTestId('status-check')).toHaveAttribute('title', /Only the owner and people the owner lets type run the check/);
  await bob.screenshot({ path: `${screenshotDir}/agent-command-approval-waiting.png` });
  await alice.getByRole('button', { name: 'Who may type' }).click();
  // The box shows what the gateway granted (it is checked once the grant comes back).
  await alice.getByLabel('Bob may type').click();
  await expect(alice.getByLabel('Bob may type')).toBeChecked();
  await alice.keyboard.press('Escape');
  await expect(bob.getByTestId('status-check')).toBeEnabled();
  for (const round of [1, 2]) {
    const approval = bob.getByTestId('command-approval');
    await expect(approval).toContainText('sh check.sh');
    if (round === 1) await bob.screenshot({ path: `${screenshotDir}/agent-command-approval.png` });
    await approval.getByRole('button', { name: 'Run' }).click();
    await expect(approval).toHaveCount(0);
  }
  const steps = alice.getByTestId('thread-tool-step');
  await expect(steps.filter({ hasText: 'ran sh check.sh → exit 1 (approved by Bob)' })).toHaveCount(1);
  await expect(steps.filter({ hasText: 'ran sh check.sh → exit 0 (approved by Bob)' })).toHaveCount(1);
  await expect(alice.locator('[data-testid="thread-message"][data-kind="assistant"]').last()).toContainText('All green.');
  await alice.screenshot({ path: `${screenshotDir}/agent-command-thread.png` });
});
