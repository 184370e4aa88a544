/**
 * Reads a V8 .cpuprofile (`node --cpu-prof`, or BENCH_CPU_PROF=1 for the benchmark children) and
 * returns where the samples landed: self time per function and per file.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface HotSpot {
  name: string;
  selfPercent: number;
  selfMs: number;
}

export function topFunctions(file: string, limit = 25): { totalMs: number; byFunction: HotSpot[]; byFile: HotSpot[] } {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const totalUs = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const functions = new Map<string, number>();
  const files = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const shortUrl = url.replace(/^file:\/\//, '').replace(/^.*\/node_modules\//, 'node_modules/').replace(/^.*\/work\/main\//, '');
    const name = `${functionName || '(anonymous)'} ${shortUrl ? `${shortUrl}:${lineNumber + 1}` : ''}`.trim();
    functions.set(name, (functions.get(name) ?? 0) + us);
    const fileKey = shortUrl || `(${functionName})`;
    files.set(fileKey, (files.get(fileKey) ?? 0) + us);
  }
  const rank = (map: Map<string, number>) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(([name, us]) => ({ name, selfMs: us / 1000, selfPercent: (us / totalUs) * 100 }));
  return { totalMs: totalUs / 1000, byFunction: rank(functions), byFile: rank(files) };
}
