import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A process cap for a sandbox run by root. The kernel never applies RLIMIT_NPROC to processes
 * whose real user is root — and a sandbox started by a root gateway maps its user to root
 * outside — so there a fork bomb is stopped by a `pids` cgroup of its own instead (v1 or v2,
 * whichever this machine mounts writable). An unprivileged gateway needs none: its rlimit holds.
 */
export interface PidsCgroup {
  /** The command, moved into the cgroup before it runs anything. */
  wrap(file: string, args: string[]): { file: string; args: string[] };
  /**
   * Kills every process in the cgroup, then removes it (retried a while: they die
   * asynchronously). Also ends a sandbox killed while bubblewrap was still setting it up, before
   * its own die-with-parent was in place.
   */
  remove(): void;
}

const roots = ['/sys/fs/cgroup/pids', '/sys/fs/cgroup'];

export function pidsCgroup(name: string, maxProcesses: number): PidsCgroup | null {
  for (const root of roots) {
    const dir = join(root, name);
    try {
      mkdirSync(dir);
    } catch {
      continue; // not a cgroup hierarchy we may write
    }
    if (!existsSync(join(dir, 'pids.max'))) {
      rmdirSync(dir);
      continue;
    }
    writeFileSync(join(dir, 'pids.max'), String(maxProcesses));
    return {
      wrap: (file, args) => ({ file: '/bin/sh', args: ['-c', 'echo $$ > "$0" && exec "$@"', join(dir, 'cgroup.procs'), file, ...args] }),
      remove: () => {
        killAll(dir);
        removeLater(dir, 40);
      },
    };
  }
  return null;
}

function killAll(dir: string): void {
  if (existsSync(join(dir, 'cgroup.kill'))) {
    writeFileSync(join(dir, 'cgroup.kill'), '1');
    return;
  }
  // cgroup v1 has no cgroup.kill: each process, a few rounds for those forked meanwhile.
  for (let round = 0; round < 5; round++) {
    let pids: number[];
    try {
      pids = readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
    } catch {
      return; // removed already
    }
    if (pids.length === 0) return;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
  }
}

function removeLater(dir: string, tries: number): void {
  if (tries % 10 === 0) killAll(dir);
  try {
    rmdirSync(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    if (tries > 0) setTimeout(() => removeLater(dir, tries - 1), 50).unref();
  }
}

/** Whether processes this gateway starts are exempt from RLIMIT_NPROC (root, outside). */
export function runsAsRoot(): boolean {
  return process.getuid?.() === 0;
}
