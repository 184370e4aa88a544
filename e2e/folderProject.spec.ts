import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test, type Browser, type Locator, type Page } from '@playwright/test';
import { unzipSync } from 'fflate';
import { openFile, openWorkspace, screenshotDir, typeAtTop } from './helpers';

/**
 * Folder projects (issue 24, README "Open a folder", ARCHITECTURE "How a folder stays in sync"):
 * a gateway of its own opens a temporary git repository from its command line; Alice (owner) and
 * Bob (editor) work in it while the test plays the disk's other writers (an editor, git).
 * The journeys run in order on the same folder, each starting from what the last one left.
 */
test.describe.configure({ mode: 'serial' });

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

const mainTs = `import { greet } from './format';

/** Prints a greeting. */
export function main(): void {
  console.log(greet('world'));
}

main();
`;

/** A PNG's signature, then bytes with NULs: git and the gateway both take it for binary. */
const logoPng = Uint8Array.from({ length: 1536 }, (_, i) => (i < 8 ? [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a][i]! : (i * 7) % 256));

/** The repository as committed: path → contents. */
const committed: Record<string, string | Uint8Array> = {
  '.gitignore': '*.log\nsecret/\n',
  'README.md': '# Greeter\n\nSays hello.\n',
  'src/main.ts': mainTs,
  'src/format.ts': 'export function greet(name: string): string {\n  return `Hello, ${name}!`;\n}\n',
  'docs/notes.md': '# Notes\n\nTo be deleted on disk.\n',
  'assets/logo.png': logoPng,
  // Written on Windows: CRLF line endings and a BOM, which the sync keeps on disk.
  'scripts/build.cmd': '\ufeff@echo off\r\nnpx tsc -p .\r\n',
};
/** On disk but ignored: by .gitignore, and by the defaults (node_modules). */
const ignored: Record<string, string> = {
  'debug.log': 'a log line\n',
  'secret/token.txt': 'not for the IDE\n',
  'node_modules/left-pad/index.js': 'module.exports = 0;\n',
};

interface Gateway {
  child: ChildProcess;
  origin: string;
  workspaceId: string;
  ownerToken: string;
  ownerLink: string;
  log: () => string;
}

let scratch: string;
let folder: string;
let gateway: Gateway;
let alice: Page;
let bob: Page;

function write(path: string, contents: string | Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, contents);
}

function git(...args: string[]): void {
  execFileSync('git', ['-c', 'user.name=Flint E2E', '-c', 'user.email=e2e@flint.invalid', '-c', 'commit.gpgsign=false', ...args], { cwd: folder, stdio: 'pipe' });
}

/** Starts main.ts on the folder in a process group of its own; resolves with the owner link it prints. */
function startGateway(dataDir: string): Promise<Gateway> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'apps/gateway/src/main.ts', '--port', '0', folder], {
    cwd: repoRoot,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, FLINT_DATA_DIR: dataDir, FLINT_PROVIDER: 'embedded' },
  });
  let output = '';
  // Read for as long as it runs: a full pipe would block the gateway's logging.
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`The gateway exited (${code}) before printing its link:\n${output}`));
    child.once('exit', onExit);
    child.stdout!.on('data', () => {
      const match = /\(owner link\): (http:\/\/\S+\/w\/([\w-]+)#token=([\w-]+))/.exec(output);
      if (!match) return;
      child.off('exit', onExit);
      const link = new URL(match[1]!);
      resolve({ child, origin: link.origin, workspaceId: match[2]!, ownerToken: match[3]!, ownerLink: link.href, log: () => output });
    });
  });
}

async function stopGateway(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  process.kill(-child.pid!, 'SIGTERM');
  const killed = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 10_000);
  await exited;
  clearTimeout(killed);
}

/** An editor link for Bob, made over REST with the owner's token (README "Share a workspace"). */
async function editorLink(): Promise<string> {
  const res = await fetch(`${gateway.origin}/api/workspaces/${gateway.workspaceId}/links`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${gateway.ownerToken}` },
    body: JSON.stringify({ role: 'editor' }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { url: string }).url;
}

/** A person in a browser context of their own, with the editor's probe (to read its exact text) and autocomplete off. */
async function person(browser: Browser, link: string, name: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await page.addInitScript(() => {
    localStorage.setItem('flint.autocomplete', 'off');
    (window as unknown as { __FLINT_EDITOR_PROBE__: (e: unknown) => void }).__FLINT_EDITOR_PROBE__ = (e) => ((window as unknown as { __editor: unknown }).__editor = e);
  });
  await openWorkspace(page, link, name);
  return page;
}

/** The text of the model in the page's editor; null when it shows none. */
const editorValue = (page: Page) => page.evaluate(() => (window as unknown as { __editor: { getModel(): { getValue(): string } | null } }).__editor.getModel()?.getValue() ?? null);

const row = (page: Page, path: string) => page.locator(`[data-testid="tree-item"][data-path="${path}"]`);
const treePaths = (page: Page) => page.getByTestId('file-tree').locator('[data-testid="tree-item"]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-path')).sort());
const onDisk = (path: string) => readFileSync(join(folder, path));
const diskText = (path: string) => readFileSync(join(folder, path), 'utf8');

/** Every file of the folder the sync follows: .git and the ignored files left out. */
function syncedFiles(): string[] {
  const skip = new Set(['.git', 'node_modules', 'secret', 'debug.log']);
  const walk = (dir: string, prefix: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      if (prefix === '' && skip.has(entry.name)) return [];
      const path = prefix + entry.name;
      return entry.isDirectory() ? walk(join(dir, entry.name), `${path}/`) : [path];
    });
  return walk(folder, '').sort();
}

/** Saves what a click downloads and unzips it. */
async function downloadedZip(page: Page, click: () => Promise<void>): Promise<{ name: string; files: Record<string, Uint8Array> }> {
  const [download] = await Promise.all([page.waitForEvent('download'), click()]);
  const saved = join(scratch, `download-${Date.now()}-${download.suggestedFilename()}`);
  await download.saveAs(saved);
  return { name: download.suggestedFilename(), files: unzipSync(readFileSync(saved)) };
}

/**
 * Drops paths from the local disk (folders included) on an element, as a person dragging them
 * from a file manager: Chromium's own drag (CDP Input.dispatchDragEvent with files), so the page
 * reads real FileSystemEntry objects. Checks the drop hint while hovering.
 */
async function dropFromDesktop(page: Page, target: Locator, paths: string[], hint: string): Promise<void> {
  const box = (await target.boundingBox())!;
  const at = { x: box.x + box.width / 2, y: box.y + box.height / 2 };
  const data = { items: [], files: paths, dragOperationsMask: 1 };
  const cdp = await page.context().newCDPSession(page);
  try {
    await cdp.send('Input.dispatchDragEvent', { type: 'dragEnter', ...at, data });
    await cdp.send('Input.dispatchDragEvent', { type: 'dragOver', ...at, data });
    await expect(page.getByTestId('upload-drop-hint')).toContainText(hint);
    await cdp.send('Input.dispatchDragEvent', { type: 'drop', ...at, data });
  } finally {
    await cdp.detach();
  }
}

test.beforeAll(async ({ browser }) => {
  scratch = mkdtempSync(join(tmpdir(), 'flint-e2e-folder-'));
  folder = join(scratch, 'greeter');
  for (const [path, contents] of Object.entries({ ...committed, ...ignored })) write(join(folder, path), contents);
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: folder });
  git('add', '-A');
  git('commit', '-q', '-m', 'The greeter as committed');
  gateway = await startGateway(join(scratch, 'data'));
  alice = await person(browser, gateway.ownerLink, 'Alice');
  await expect(alice.getByTestId('role-badge')).toContainText('Owner');
  bob = await person(browser, await editorLink(), 'Bob');
  await expect(bob.getByTestId('role-badge')).toContainText('Editor');
});

test.afterAll(async () => {
  await alice?.context().close();
  await bob?.context().close();
  if (gateway) await stopGateway(gateway.child);
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

test.afterEach(async ({}, testInfo) => {
  if (testInfo.status !== testInfo.expectedStatus && gateway) await testInfo.attach('gateway log', { body: gateway.log(), contentType: 'text/plain' });
});

test('opening a folder lists its files without the ignored ones; a binary file shows its size and a placeholder, and downloads with its bytes', async () => {
  const folders = ['assets', 'docs', 'scripts', 'src'];
  const expected = [...Object.keys(committed), ...folders].sort();
  for (const page of [alice, bob]) await expect.poll(() => treePaths(page)).toEqual(expected);

  const logo = row(alice, 'assets/logo.png');
  await expect(logo).toHaveAttribute('data-binary', 'true');
  await expect(logo.getByTestId('tree-binary-size')).toHaveText('1.5 KB');
  await expect(row(alice, 'src/main.ts')).not.toHaveAttribute('data-binary', /.*/);

  await logo.click();
  await expect(alice.locator('[data-testid="tab"][data-path="assets/logo.png"]')).toBeVisible();
  const placeholder = alice.getByTestId('binary-placeholder');
  await expect(placeholder).toContainText('Binary file, 1.5 KB');
  await expect(placeholder).toContainText('assets/logo.png');
  expect(await editorValue(alice)).toBeNull();

  const zip = await downloadedZip(alice, () => placeholder.getByTestId('binary-download-button').click());
  expect(zip.name).toBe('assets.zip');
  expect(Object.keys(zip.files)).toEqual(['logo.png']);
  expect(Buffer.from(zip.files['logo.png']!).equals(onDisk('assets/logo.png'))).toBe(true);
});

test('typing reaches the file on disk; the tree marks it M and the Changes view diffs HEAD against the live text', async () => {
  await openFile(alice, 'src/main.ts');
  await typeAtTop(alice, '// typed by Alice');
  const typed = `// typed by Alice\n${mainTs}`;
  await expect.poll(() => diskText('src/main.ts')).toBe(typed);

  for (const page of [alice, bob]) {
    await expect(row(page, 'src/main.ts')).toHaveAttribute('data-git', 'M');
    await expect(row(page, 'src/main.ts').getByTestId('tree-git-mark')).toHaveText('M');
    await expect(row(page, 'src').getByTestId('tree-git-dot')).toBeVisible();
    await expect(page.getByTestId('changes-toggle')).toContainText('main');
    await expect(page.getByTestId('changes-count')).toHaveText('1');
  }
  await expect(row(alice, 'src/format.ts')).not.toHaveAttribute('data-git', /.*/);
  await expect(row(alice, 'assets').getByTestId('tree-git-dot')).toHaveCount(0);
  await alice.screenshot({ path: `${screenshotDir}/folder-tree-git-marks.png` });

  await alice.getByTestId('changes-toggle').click();
  const changes = alice.getByTestId('changes-view');
  await expect(changes).toBeVisible();
  await expect(changes.getByTestId('changes-branch')).toContainText('main');
  const items = changes.getByTestId('changes-item');
  await expect(items).toHaveCount(1);
  await expect(items.first()).toHaveAttribute('data-path', 'src/main.ts');
  await expect(items.first()).toHaveAttribute('data-status', 'modified');

  await items.first().click();
  const diff = alice.getByTestId('diff-view');
  await expect(diff).toBeVisible();
  await expect(diff.getByTestId('diff-path')).toHaveText('src/main.ts');
  const head = diff.locator('[data-testid="diff-editor"] .editor.original .view-lines');
  const live = diff.locator('[data-testid="diff-editor"] .editor.modified .view-lines');
  await expect(head).toContainText("import { greet } from './format';");
  await expect(head).not.toContainText('typed by Alice');
  await expect(live).toContainText('// typed by Alice');
  await expect(live).toContainText("import { greet } from './format';");

  // The right side is the file's live model: Bob's typing shows there as he types.
  await openFile(bob, 'src/main.ts');
  await typeAtTop(bob, '// typed by Bob');
  await expect(live).toContainText('// typed by Bob');
  await expect(head).not.toContainText('typed by Bob');
  await expect.poll(() => diskText('src/main.ts')).toBe(`// typed by Bob\n${typed}`);
  await alice.screenshot({ path: `${screenshotDir}/folder-changes-diff.png` });

  await diff.getByTestId('diff-close').click();
  await expect(diff).toBeHidden();
  await alice.getByTestId('changes-toggle').click();
  await expect(alice.getByTestId('file-tree')).toBeVisible();
});

test('what another program writes on disk reaches both editors and both trees: a change, a new file, a deleted one', async () => {
  for (const page of [alice, bob]) await expect.poll(() => editorValue(page)).toBe(diskText('src/main.ts'));
  const changed = diskText('src/main.ts').replace("greet('world')", "greet('disk')") + 'export const fromDisk = true;\n';
  writeFileSync(join(folder, 'src/main.ts'), changed);
  for (const page of [alice, bob]) await expect.poll(() => editorValue(page)).toBe(changed);

  write(join(folder, 'src/fromDisk.ts'), 'export const created = "on disk";\n');
  for (const page of [alice, bob]) {
    await expect(row(page, 'src/fromDisk.ts')).toBeVisible();
    await expect(row(page, 'src/fromDisk.ts')).toHaveAttribute('data-git', 'U');
  }

  unlinkSync(join(folder, 'docs/notes.md'));
  for (const page of [alice, bob]) await expect(row(page, 'docs/notes.md')).toHaveCount(0);
  // Gone from the tree, and not written back from its document.
  expect(existsSync(join(folder, 'docs/notes.md'))).toBe(false);
  await expect(alice.getByTestId('changes-count')).toHaveText('3');
  // The disk's change did not bounce: the file holds what was written.
  expect(diskText('src/main.ts')).toBe(changed);
});

test('a folder dropped on a folder row of the tree lands in that folder, on disk with the same bytes', async () => {
  const site = join(scratch, 'site');
  const pixel = Uint8Array.from({ length: 300 }, (_, i) => (i % 3 === 0 ? 0 : i % 256));
  const dropped: Record<string, string | Uint8Array> = {
    'site/index.html': '<!doctype html>\n<title>Greeter</title>\n<img src="img/pixel.png">\n',
    'site/css/style.css': 'body {\r\n  margin: 0;\r\n}\r\n',
    'site/img/pixel.png': pixel,
  };
  for (const [path, contents] of Object.entries(dropped)) write(join(scratch, path), contents);

  await dropFromDesktop(alice, row(alice, 'assets'), [site], 'assets');
  await expect(alice.getByTestId('notice')).toContainText('3 created');

  const landed = Object.keys(dropped).map((path) => `assets/${path}`);
  for (const page of [alice, bob]) for (const path of landed) await expect(row(page, path)).toBeVisible();
  await expect(row(alice, 'assets/site/img/pixel.png')).toHaveAttribute('data-binary', 'true');
  await expect(row(alice, 'assets/site/img/pixel.png').getByTestId('tree-binary-size')).toHaveText('300 B');
  for (const [path, contents] of Object.entries(dropped)) {
    await expect.poll(() => existsSync(join(folder, 'assets', path)) && onDisk(`assets/${path}`).equals(Buffer.from(contents))).toBe(true);
  }
  // Git sees each new file (not just their folder) as untracked.
  for (const path of landed) await expect(row(alice, path)).toHaveAttribute('data-git', 'U');
  await expect(row(alice, 'assets').getByTestId('tree-git-dot')).toBeVisible();
  await expect(alice.getByTestId('changes-count')).toHaveText('6');
  await alice.screenshot({ path: `${screenshotDir}/folder-after-drop.png` });

  // Upload…: picked files go into the selected row's folder (main.ts is selected: src).
  const picked = { 'notes.txt': Buffer.from('picked, not dropped\n'), 'icon.bin': Buffer.from([0, 1, 2, 3, 254, 255]) };
  await alice.getByTestId('upload-input').setInputFiles(Object.entries(picked).map(([name, buffer]) => ({ name, mimeType: 'application/octet-stream', buffer })));
  await expect(alice.getByTestId('notice')).toContainText('Uploaded to src: 2 created');
  for (const page of [alice, bob]) for (const name of Object.keys(picked)) await expect(row(page, `src/${name}`)).toBeVisible();
  await expect(row(bob, 'src/icon.bin')).toHaveAttribute('data-binary', 'true');
  for (const [name, bytes] of Object.entries(picked)) await expect.poll(() => existsSync(join(folder, 'src', name)) && onDisk(`src/${name}`).equals(bytes)).toBe(true);
});

test('the workspace downloads as a zip holding every synced file with the bytes on disk', async () => {
  const zip = await downloadedZip(alice, () => alice.getByTestId('download-workspace-button').click());
  expect(zip.name).toBe('greeter.zip');
  expect(Object.keys(zip.files).sort()).toEqual(syncedFiles());
  const differing = Object.entries(zip.files)
    .filter(([path, bytes]) => !Buffer.from(bytes).equals(onDisk(path)))
    .map(([path]) => path);
  expect(differing, 'files whose bytes in the zip differ from the disk').toEqual([]);
});
