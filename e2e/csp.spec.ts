import { expect, test } from '@playwright/test';
import { createDemoWorkspace, editorText, openFile, screenshotDir, typeAtTop } from './helpers';

// The gateway serves the IDE under a strict Content-Security-Policy. The IDE must not need more
// than it grants: Monaco, its workers, the TypeScript worker and the WebSocket all run within it.
test('the IDE works under its Content-Security-Policy: editing, TypeScript markers and hover, no violation', async ({ page, request }) => {
  const violations: string[] = [];
  await page.exposeFunction('reportCspViolation', (violation: string) => violations.push(violation));
  await page.addInitScript(() => {
    localStorage.setItem('flint.displayName', 'Cleo');
    document.addEventListener('securitypolicyviolation', (event) => {
      const report = (window as unknown as { reportCspViolation: (v: string) => void }).reportCspViolation;
      report(`${event.effectiveDirective} blocked ${event.blockedURI || 'inline'} (${event.sourceFile}:${event.lineNumber})`);
    });
  });
  const cspConsoleErrors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content[- ]Security[- ]Policy/i.test(message.text())) cspConsoleErrors.push(message.text());
  });
  // Checked after each step, so a step that breaks under the policy fails naming what was blocked.
  const expectNothingBlocked = () => {
    expect(violations).toEqual([]);
    expect(cspConsoleErrors).toEqual([]);
  };

  const response = await page.goto(await createDemoWorkspace(request));
  const policy = response?.headers()['content-security-policy'] ?? '';
  expect(policy).toContain("default-src 'self'");
  expect(policy).toContain("script-src 'self';");
  expect(policy).toContain("frame-ancestors 'none'");
  expect(response?.headers()['x-frame-options']).toBe('DENY');
  await expect(page.getByTestId('status-connection')).toContainText('Connected');

  await openFile(page, 'src/format.ts');
  expectNothingBlocked();
  const errors = page.locator('[data-testid="editor"] .squiggly-error');
  await expect(errors).toHaveCount(0, { timeout: 15_000 });
  await typeAtTop(page, "const total: number = 'many';");
  await expect(editorText(page)).toContainText("const total: number = 'many';");
  // A marker comes from the TypeScript worker: it was created, and it answers.
  await expect(errors).toHaveCount(1, { timeout: 15_000 });
  expectNothingBlocked();

  // Quick info is another round trip to the same worker, shown in a hover widget.
  await editorText(page).getByText('total', { exact: true }).first().hover();
  await expect(page.locator('.monaco-hover').getByText('const total: number')).toBeVisible({ timeout: 15_000 });
  await page.screenshot({ path: `${screenshotDir}/csp-ide.png` });
  expectNothingBlocked();
});
