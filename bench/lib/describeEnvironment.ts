import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { summarize } from './percentile';

export interface Environment {
  cpuModel: string;
  cores: number;
  node: string;
  platform: string;
  totalMemoryGiB: number;
  /** 1, 5 and 15 minute load averages when the benchmark started: other work on a shared machine. */
  loadAverageAtStart: number[];
  startedAt: string;
  /**
   * How late a 1 ms timer fires on this machine right now (ms): the scheduling noise every
   * latency in the run also pays. A busy shared machine shows it in the p99.
   */
  timerLatencyMs: { p50: number; p99: number; max: number };
  /**
   * Short SHA-256 of the measured sources (gateway, packages), so a result can be matched to
   * the code it measured when the tree changes between runs.
   */
  sourceHash: Record<string, string>;
}

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function hashTree(dir: string): string {
  const hash = createHash('sha256');
  const walk = (path: string): void => {
    for (const name of readdirSync(path).sort()) {
      const full = join(path, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (/\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name)) hash.update(name).update(readFileSync(full));
    }
  };
  walk(dir);
  return hash.digest('hex').slice(0, 12);
}

function sourceHashes(): Record<string, string> {
  const dirs = ['apps/gateway/src', ...readdirSync(join(root, 'packages')).map((p) => `packages/${p}/src`)];
  const out: Record<string, string> = {};
  for (const dir of dirs) {
    try {
      out[dir] = hashTree(join(root, dir));
    } catch {
      // A package without src/ has nothing to hash.
    }
  }
  return out;
}

/** Fires `samples` setTimeout(1) in a row and reports how long each really took. */
async function timerLatency(samples = 200): Promise<Environment['timerLatencyMs']> {
  const out: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 1));
    out.push(performance.now() - t0);
  }
  const s = summarize(out);
  const round = (v: number) => Math.round(v * 100) / 100;
  return { p50: round(s.p50), p99: round(s.p99), max: round(s.max) };
}

/** What a result was measured on; every JSON result carries it. */
export async function describeEnvironment(): Promise<Environment> {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    totalMemoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    loadAverageAtStart: os.loadavg().map((l) => Math.round(l * 100) / 100),
    startedAt: new Date().toISOString(),
    timerLatencyMs: await timerLatency(),
    sourceHash: sourceHashes(),
  };
}
