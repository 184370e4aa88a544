import type { ProcessStats } from './ChildHost';

/** CPU microseconds (user + system) a process spent between two stats snapshots. */
export function cpuDelta(before: ProcessStats, after: ProcessStats): { totalUs: number; userUs: number; systemUs: number } {
  const userUs = after.cpu.user - before.cpu.user;
  const systemUs = after.cpu.system - before.cpu.system;
  return { totalUs: userUs + systemUs, userUs, systemUs };
}
