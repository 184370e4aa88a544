import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
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
  remove(): Promise<void>;
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
        return new Promise<void>((resolve) => removeLater(dir, 40, resolve));
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

function removeLater(dir: string, tries: number, done: () => void): void {
  if (tries % 10 === 0) killAll(dir);
  try {
    rmdirSync(dir);
    return done();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || tries === 0) return done();
    setTimeout(() => removeLater(dir, tries - 1, done), 50).unref();
  }
}

/**
 * Empty cgroups of terminals whose gateway stopped before it could remove them (a crash, a
 * kill -9), older than a minute: a younger empty one may be a terminal starting right now.
 */
export function removeStaleCgroups(): void {
  for (const root of roots) {
    let names: string[];
    try {
      names = readdirSync(root).filter((name) => name.startsWith('flint-t'));
    } catch {
      continue;
    }
    for (const name of names) {
      try {
        const dir = join(root, name);
        if (Date.now() - statSync(dir).mtimeMs < 60_000) continue;
        if (readFileSync(join(dir, 'cgroup.procs'), 'utf8').trim() === '') rmdirSync(dir);
      } catch {
        // in use, or gone meanwhile
      }
    }
  }
}

/** Whether processes this gateway starts are exempt from RLIMIT_NPROC (root, outside). */
export function runsAsRoot(): boolean {
  return process.getuid?.() === 0;
}
