/**
 * CPU time of processes the bench did not fork through ChildHost (gateways started as main.ts,
 * redis-server, PostgreSQL), read from /proc: no IPC into them, so nothing is added to what they
 * measure. A process counts with its descendants: PostgreSQL serves each connection from a
 * backend process of its own (in a process group of its own, so not found by group).
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const ticksPerSecond = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100;

interface ProcEntry {
  ppid: number;
  /** utime + stime: the process, all its threads (clock ticks). */
  ownTicks: number;
  /** cutime + cstime: its children that have exited and been waited for. */
  reapedTicks: number;
}

function readFile(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null; // it exited between the listing and the read
  }
}

function readProcesses(): Map<number, ProcEntry> {
  const out = new Map<number, ProcEntry>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readFile(`/proc/${name}/stat`);
    if (stat === null) continue;
    // The command name is in parentheses and may hold spaces: the fields start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 of proc(5): ppid is 4, utime 14, stime 15, cutime 16, cstime 17.
    out.set(Number(name), { ppid: Number(fields[1]), ownTicks: Number(fields[11]) + Number(fields[12]), reapedTicks: Number(fields[13]) + Number(fields[14]) });
  }
  return out;
}

/**
 * Nanoseconds on CPU of all of a process's threads (schedstat's first field, user + system): a
 * 10 ms tick is too coarse for what Redis or PostgreSQL spend in a two-second window. Null where
 * the kernel keeps no schedstat.
 */
function threadsCpuMs(pid: number): number | null {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return null;
  }
  let ns = 0;
  for (const task of tasks) {
    const line = readFile(`/proc/${pid}/task/${task}/schedstat`);
    if (line === null) return null;
    ns += Number(line.split(' ')[0]);
  }
  return ns / 1e6;
}

/**
 * CPU milliseconds (user + system) each root process and its live descendants have used so far,
 * with the children they have reaped; subtract two readings for a window.
 */
export function processTreeCpuMs(roots: readonly number[]): number[] {
  const processes = readProcesses();
  const children = new Map<number, number[]>();
  for (const [pid, entry] of processes) {
    const siblings = children.get(entry.ppid);
    if (siblings) siblings.push(pid);
    else children.set(entry.ppid, [pid]);
  }
  return roots.map((root) => {
    let ms = 0;
    const stack = [root];
    while (stack.length > 0) {
      const pid = stack.pop()!;
      const entry = processes.get(pid);
      if (!entry) continue;
      ms += (threadsCpuMs(pid) ?? (entry.ownTicks * 1000) / ticksPerSecond) + (entry.reapedTicks * 1000) / ticksPerSecond;
      stack.push(...(children.get(pid) ?? []));
    }
    return ms;
  });
}
