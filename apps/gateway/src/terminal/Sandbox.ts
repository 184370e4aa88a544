import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { pidsCgroup, removeStaleCgroups, runsAsRoot } from './pidsCgroup';

/**
 * Every process a terminal or the agent starts runs under bubblewrap (decision 0033): a new
 * user, PID, network, IPC and UTS namespace; the workspace's folder read-write at /workspace,
 * its `.git` read-only; the host's /usr read-only and nothing else of it (no home, no gateway
 * data, no other workspace, no /etc beyond what a shell needs); a private /tmp; no capability;
 * rlimits set inside the sandbox, so they count only its own processes.
 */

export interface SandboxLimits {
  /** CPU seconds per process. */
  cpuSeconds: number;
  /** Address space per process. */
  memoryBytes: number;
  /** Processes (and threads) of the sandbox together: a fork bomb stops here. */
  processes: number;
  /** Largest file a process may write: a `dd` that fills the disk stops here. */
  fileBytes: number;
  /** Size of the private /tmp (memory). */
  tmpBytes: number;
}

export const defaultSandboxLimits: SandboxLimits = {
  cpuSeconds: 600,
  memoryBytes: 4 * 1024 ** 3,
  processes: 256,
  fileBytes: 512 * 1024 ** 2,
  tmpBytes: 256 * 1024 ** 2,
};

export interface SandboxSpec {
  /** The folder the processes work in, bound read-write at /workspace. */
  folder: string;
  /** Paths inside `folder` the sandbox must not see (the gateway's data folder when it lies there). */
  hidden?: string[];
  network: boolean;
  limits: SandboxLimits;
  /** A folder of the gateway's own (not the workspace) for the sandbox's /etc/passwd and /etc/group. */
  supportDir: string;
}

export const bwrapPath = '/usr/bin/bwrap';
/** Where the workspace's folder appears inside the sandbox. */
export const sandboxRoot = '/workspace';

/** What the sandbox's shell may read of /etc: enough for a shell, TLS and name lookups. */
const etcReadable = ['alternatives', 'ld.so.cache', 'ld.so.conf', 'ld.so.conf.d', 'localtime', 'ssl', 'ca-certificates', 'nsswitch.conf', 'bash.bashrc', 'profile', 'inputrc', 'terminfo', 'mime.types'];

/** Environment inside: nothing of the gateway's (its provider keys never reach a shell). */
function sandboxEnv(): string[] {
  const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/tmp', TERM: 'xterm-256color', LANG: 'C.UTF-8', USER: 'flint', SHELL: '/bin/bash', PS1: '\\w\\$ ' };
  return Object.entries(env).flatMap(([k, v]) => ['--setenv', k, v]);
}

function supportFiles(supportDir: string): { passwd: string; group: string } {
  mkdirSync(supportDir, { recursive: true, mode: 0o700 });
  const passwd = join(supportDir, 'passwd');
  const group = join(supportDir, 'group');
  if (!existsSync(passwd)) writeFileSync(passwd, 'flint:x:1000:1000:Flint sandbox:/tmp:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n');
  if (!existsSync(group)) writeFileSync(group, 'flint:x:1000:\nnogroup:x:65534:\n');
  return { passwd, group };
}

/**
 * bwrap's arguments up to `--`, then the command under `prlimit`. The rlimits are set by a
 * process already inside the new user namespace: the kernel counts RLIMIT_NPROC per user per
 * namespace, so the limit is the sandbox's alone, not every process of the gateway's user.
 */
export function sandboxCommand(spec: SandboxSpec, command: string[]): { file: string; args: string[] } {
  const folder = realpathSync(spec.folder);
  const { passwd, group } = supportFiles(spec.supportDir);
  const args = [
    '--unshare-all',
    ...(spec.network ? ['--share-net'] : []),
    '--unshare-user',
    '--uid', '1000',
    '--gid', '1000',
    '--cap-drop', 'ALL',
    // No user namespace inside: it would hand a process capabilities over its own mounts.
    '--disable-userns',
    '--die-with-parent',
    '--clearenv',
    ...sandboxEnv(),
    '--hostname', 'flint',
    '--ro-bind', '/usr', '/usr',
    '--symlink', 'usr/bin', '/bin',
    '--symlink', 'usr/sbin', '/sbin',
    '--symlink', 'usr/lib', '/lib',
    ...(existsSync('/usr/lib64') ? ['--symlink', 'usr/lib64', '/lib64'] : []),
    '--proc', '/proc',
    '--dev', '/dev',
    '--size', String(spec.limits.tmpBytes),
    '--tmpfs', '/tmp',
    '--dir', '/etc',
    ...etcReadable.flatMap((name) => ['--ro-bind-try', `/etc/${name}`, `/etc/${name}`]),
    ...(spec.network ? ['--ro-bind-try', '/etc/resolv.conf', '/etc/resolv.conf', '--ro-bind-try', '/etc/hosts', '/etc/hosts'] : []),
    '--ro-bind', passwd, '/etc/passwd',
    '--ro-bind', group, '/etc/group',
    '--bind', folder, sandboxRoot,
    // After the folder: these mounts cover parts of it.
    ...(existsSync(join(folder, '.git')) ? ['--ro-bind', join(folder, '.git'), `${sandboxRoot}/.git`] : []),
    ...(spec.hidden ?? []).flatMap((path) => {
      const inside = hiddenInside(folder, path);
      return inside === null ? [] : ['--tmpfs', `${sandboxRoot}/${inside}`, '--remount-ro', `${sandboxRoot}/${inside}`];
    }),
    '--chdir', sandboxRoot,
    '--',
    '/usr/bin/prlimit',
    `--cpu=${spec.limits.cpuSeconds}`,
    `--as=${spec.limits.memoryBytes}`,
    `--nproc=${spec.limits.processes}`,
    `--fsize=${spec.limits.fileBytes}`,
    '--core=0',
    ...command,
  ];
  return { file: bwrapPath, args };
}

function hiddenInside(folder: string, path: string): string | null {
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return null; // not there: nothing to hide
  }
  if (!real.startsWith(folder + sep)) return null;
  return relative(folder, real).split(sep).join('/');
}

export type SandboxProbe = { ok: true } | { ok: false; reason: string };

/**
 * Whether bubblewrap runs here with the namespaces the sandbox needs (a container without user
 * namespaces, macOS: it does not). Runs the real sandbox once on an empty folder.
 */
export function probeSandbox(supportDir: string): SandboxProbe {
  if (!existsSync(bwrapPath)) return { ok: false, reason: `bubblewrap is not installed (${bwrapPath}); install the bubblewrap package to enable terminals.` };
  if (runsAsRoot()) {
    const cgroup = pidsCgroup(`flint-probe-${process.pid}`, 8);
    if (!cgroup) return { ok: false, reason: 'the gateway runs as root, where process limits do not apply, and cannot make a pids cgroup to cap them instead; run it as an ordinary user to enable terminals.' };
    void cgroup.remove();
    removeStaleCgroups();
  }
  const probeFolder = join(supportDir, 'probe');
  mkdirSync(probeFolder, { recursive: true, mode: 0o700 });
  const { file, args } = sandboxCommand({ folder: probeFolder, network: false, limits: defaultSandboxLimits, supportDir }, ['/bin/true']);
  const run = spawnSync(file, args, { encoding: 'utf8', timeout: 10_000 });
  if (run.status === 0) return { ok: true };
  const why = (run.stderr || run.error?.message || `exit ${run.status}`).trim().split('\n')[0];
  return { ok: false, reason: `bubblewrap cannot create its sandbox here (${why}); terminals are off.` };
}
