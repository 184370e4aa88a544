/**
 * How B11 (bench/benchmarks/b11AgentThread.ts) drives its tabs: IDE tabs signed in with a link,
 * their agent panel opened or closed by its button, one agent turn asked from the agent panel or
 * the Ctrl-K box while a collaborator's editor is watched (bench/lib/editorScreenProbe.ts), and
 * B10's floor page.
 */
import type { BrowserContext, Page } from '@playwright/test';
import type { ProbeData } from './browserProbe';
import type { ChildHost } from './ChildHost';
import type { EditorScreenData, EditorScreenProbe } from './editorScreenProbe';
import type { StreamRecord } from './PacedTokenServer';

/** `insert`: lines added after the file's import; `rewrite`: lines replacing its 10-line function. */
export type EditKind = 'insert' | 'rewrite';

/** How long after a stream's planned end its tokens may still reach the page (else: missed). */
export const settleMs = 20_000;

type ProbeWindow = { __benchProbe: { start(): void; stop(): ProbeData } };
type ScreenWindow = { __benchScreen: EditorScreenProbe };

/** An IDE tab signed in with `url`'s token, its agent panel `open` or closed. */
export async function openIde(context: BrowserContext, url: string, panel: 'open' | 'closed'): Promise<Page> {
  const page = await context.newPage();
  await page.goto(url);
  await page.locator('[data-testid="status-connection"]', { hasText: 'Connected' }).waitFor({ timeout: 30_000 });
  // By its button, not the remembered state: tabs loading together share (and race on) localStorage.
  await setPanel(page, panel === 'open');
  return page;
}

/** B10's floor page: B5's receive-only page on the raw relay. */
export async function openFloor(context: BrowserContext, controlsUrl: string, relayUrl: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${controlsUrl}/floor.html?relay=${encodeURIComponent(relayUrl)}`);
  await page.waitForFunction(() => typeof (window as unknown as { __benchStart?: unknown }).__benchStart === 'function');
  return page;
}

/** The page in front, one animation frame later (smoke's stand-in for `waitForQuiet`). */
export async function nextFrame(page: Page): Promise<void> {
  await page.bringToFront();
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(resolve)));
}

/** Shows `path` in the page's editor (its first line, `// B11-<x>-<k>`, names it). */
async function openFile(page: Page, path: string): Promise<void> {
  await page.bringToFront();
  await page.locator(`[data-testid="tree-item"][data-path="${path}"]`).click();
  const label = `B11-${path[0]}-${path.slice(1, -'.ts'.length)}`;
  await page.locator('[data-testid="editor"] .view-lines', { hasText: new RegExp(`${label}(?!\\d)`) }).waitFor({ timeout: 30_000 });
}

/** Opens or closes the page's agent panel with its top-bar button. */
export async function setPanel(page: Page, open: boolean): Promise<void> {
  await page.bringToFront();
  const toggle = page.getByTestId('agent-panel-toggle');
  if ((await toggle.getAttribute('aria-pressed')) !== String(open)) await toggle.click();
  await page.getByTestId('agent-panel').waitFor({ state: open ? 'visible' : 'detached' });
}

export interface AgentTurn {
  prompter: Page;
  collaborator: Page;
  provider: ChildHost;
  arm: 'thread' | 'inline';
  edit: EditKind;
  k: number;
  tokens: number;
  rate: number;
  quiet(page: Page): Promise<void>;
  progress(step: string): void;
}

/**
 * One agent turn, as B10 runs it: the collaborator opens the file and waits for its editor to
 * settle, the prompter opens it too and writes the request (thread: in the agent panel; inline:
 * in the Ctrl-K box over the caret's empty line 3, or over the function for `rewrite`), the
 * collaborator is brought to front and starts watching, then the prompter presses Enter (keys
 * reach a background page). Ends once every marked token of the file was painted with no
 * provisional text left, or `settleMs` after the stream's planned end.
 */
export async function askAgent(o: AgentTurn): Promise<EditorScreenData> {
  const path = `${o.arm === 'thread' ? 'a' : 's'}${o.k}.ts`;
  await openFile(o.collaborator, path);
  // The TypeScript worker's first check of a file takes a while: a user asks after it.
  await o.quiet(o.collaborator);
  await openFile(o.prompter, path);
  if (o.arm === 'thread') {
    await o.prompter.getByTestId('thread-input').fill(o.edit === 'insert' ? 'add the lines to both files' : 'rewrite total in both files');
  } else {
    await o.prompter.locator('[data-testid="editor"] .view-lines').click();
    await o.prompter.keyboard.press('Control+Home');
    if (o.edit === 'insert') {
      for (let i = 0; i < 2; i++) await o.prompter.keyboard.press('ArrowDown');
    } else {
      for (let i = 0; i < 3; i++) await o.prompter.keyboard.press('ArrowDown');
      for (let i = 0; i < 10; i++) await o.prompter.keyboard.press('Shift+ArrowDown');
    }
    await o.prompter.keyboard.press('Control+k');
    await o.prompter.getByTestId('inline-prompt').fill(o.edit === 'insert' ? 'add the lines here' : 'rewrite this function');
  }
  o.progress(`${path} open in both tabs, the request typed`);

  await o.collaborator.bringToFront();
  await o.collaborator.evaluate(() => new Promise((resolve) => requestAnimationFrame(resolve)));
  const before = (await o.provider.call<StreamRecord[]>('streams')).length;
  await o.collaborator.evaluate(() => (window as unknown as ScreenWindow).__benchScreen.start());
  await o.prompter.keyboard.press('Enter');
  const waitMs = (o.tokens / o.rate) * 1000 + settleMs;
  const settled = await o.collaborator
    .waitForFunction(
      (n) => {
        const probe = (window as unknown as ScreenWindow).__benchScreen;
        return probe.count() >= n && !probe.provisionalShown();
      },
      o.tokens,
      { timeout: waitMs, polling: 50 },
    )
    .then(
      () => true,
      () => false,
    );
  if (!settled && (await o.provider.call<StreamRecord[]>('streams')).length === before) throw new Error(`the provider got no request in ${(waitMs / 1000).toFixed(0)} s after the ${o.arm} request for ${path} was sent: it did not reach the agent`);
  return o.collaborator.evaluate(() => (window as unknown as ScreenWindow).__benchScreen.stop());
}

/** One stream through the raw relay to B5's floor page; resolves once the page handled its end. */
export async function floorStream(floor: Page, tokens: number): Promise<EditorScreenData> {
  type FloorWindow = { __benchProbe: { start(): void; stop(): ProbeData; count(): number }; __benchStart: (tokens: number) => Promise<void> };
  await floor.bringToFront();
  await floor.evaluate(() => new Promise((resolve) => requestAnimationFrame(resolve)));
  await floor.evaluate(() => (window as unknown as FloorWindow).__benchProbe.start());
  await floor.evaluate((n) => (window as unknown as FloorWindow).__benchStart(n), tokens);
  await floor.waitForFunction((n) => (window as unknown as FloorWindow).__benchProbe.count() >= n, tokens, { timeout: settleMs, polling: 50 }).catch(() => undefined);
  const probe = await floor.evaluate(() => (window as unknown as FloorWindow).__benchProbe.stop());
  return { screenAt: probe.screenAt, provisional: [], frames: probe.frames, scanMs: 0 };
}

/** B5's page probe (bench/lib/browserProbe.ts): frames and long animation frames from now. */
export async function startFrames(page: Page): Promise<void> {
  await page.evaluate(() => (window as unknown as ProbeWindow).__benchProbe.start());
}

export function stopFrames(page: Page): Promise<ProbeData> {
  return page.evaluate(() => (window as unknown as ProbeWindow).__benchProbe.stop());
}
