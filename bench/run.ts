/**
 * `npm run bench` runs every benchmark; `-- --only B1,B3` a few; `npm run bench:smoke` runs
 * each for a few seconds so CI proves they still work. Each prints its tables and target checks
 * and writes bench/results/<name>.json (smoke: bench/results/smoke/<name>.json). Exits non-zero
 * when a benchmark crashes or hangs; a missed target is a finding, not a failure.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { systemClock } from '@flint/gateway';
import { b1TimeToFirstToken } from './benchmarks/b1TimeToFirstToken';
import { b2CpuPerToken } from './benchmarks/b2CpuPerToken';
import { b3Throughput } from './benchmarks/b3Throughput';
import { b4ProviderTransport } from './benchmarks/b4ProviderTransport';
import { b5BrowserSmoothness } from './benchmarks/b5BrowserSmoothness';
import { b6CollaborationLatency } from './benchmarks/b6CollaborationLatency';
import { b6bBrowserCollaboration } from './benchmarks/b6bBrowserCollaboration';
import { b7Footprint } from './benchmarks/b7Footprint';
import { b8Autocomplete } from './benchmarks/b8Autocomplete';
import { b9StreamReading } from './benchmarks/b9StreamReading';
import { b10TokenToScreen } from './benchmarks/b10TokenToScreen';
import { b11AgentThread } from './benchmarks/b11AgentThread';
import { b12FolderProject } from './benchmarks/b12FolderProject';
import { b13Cluster } from './benchmarks/b13Cluster';
import { b14HostileRequests } from './benchmarks/b14HostileRequests';
import { b15Recording } from './benchmarks/b15Recording';
import { b16Terminal } from './benchmarks/b16Terminal';
import type { Benchmark, BenchReport } from './lib/Benchmark';
import { benchCertFile } from './lib/benchTls';
import { ChildHost } from './lib/ChildHost';
import { describeEnvironment } from './lib/describeEnvironment';
import { printTable } from './lib/printTable';
import { ProgressWatchdog, type WatchdogLimits } from './lib/ProgressWatchdog';
import { resultMarkdown, targetTable, type StoredResult } from './lib/resultMarkdown';

const all: Benchmark[] = [b1TimeToFirstToken, b2CpuPerToken, b3Throughput, b4ProviderTransport, b5BrowserSmoothness, b6CollaborationLatency, b6bBrowserCollaboration, b7Footprint, b8Autocomplete, b9StreamReading, b10TokenToScreen, b11AgentThread, b12FolderProject, b13Cluster, b14HostileRequests, b15Recording, b16Terminal];

const args = process.argv.slice(2);
const smoke = args.includes('--smoke');
const onlyArg = args.find((a) => a.startsWith('--only'));
const only = onlyArg ? (onlyArg.includes('=') ? onlyArg.split('=')[1]! : args[args.indexOf(onlyArg) + 1] ?? '').split(',').map((s) => s.trim().toUpperCase()) : null;
const selected = only ? all.filter((b) => only.includes(b.id)) : all;
if (selected.length === 0) {
  console.error(`No benchmark matches --only ${only?.join(',')}; known: ${all.map((b) => b.id).join(', ')}`);
  process.exit(2);
}

// BENCH_TLS=1: token sources over https (lib/benchTls.ts); every server process trusts the test
// certificate, and the results go to results/tls/ (they are not the plain-HTTP runs' to replace).
const tls = process.env.BENCH_TLS === '1';
if (tls) process.env.NODE_EXTRA_CA_CERTS = benchCertFile;
const resultsDir = join(dirname(fileURLToPath(import.meta.url)), 'results', smoke ? 'smoke' : '', tls ? 'tls' : '');
mkdirSync(resultsDir, { recursive: true });
/**
 * A hung benchmark is a crash. Smoke proves each still works, however busy the machine: it hangs
 * when silent for 2 minutes (20 in all, so CI cannot hang). The full run must fit ~15 minutes.
 */
const limits: WatchdogLimits = smoke ? { stallMs: 120_000, limitMs: 1_200_000 } : { limitMs: 900_000 };

// A stray rejection (a timer's IPC call to a child that died) is reported, not fatal to the runner.
process.on('unhandledRejection', (reason) => console.error(`unhandled rejection: ${String(reason)}`));

const crashed: string[] = [];
const started = performance.now();

for (const bench of selected) {
  const environment = await describeEnvironment();
  console.log(`\n=== ${bench.id} ${bench.title}${smoke ? ' (smoke)' : ''} — load average ${environment.loadAverageAtStart.join(' ')}, 1 ms timer fires after p50 ${environment.timerLatencyMs.p50} / p99 ${environment.timerLatencyMs.p99} ms`);
  const t0 = performance.now();
  const watchdog = new ProgressWatchdog(bench.id, limits, systemClock);
  const death = ChildHost.unexpectedExit();
  const log = (message: string) => {
    watchdog.progressed(message);
    console.log(`  ${message}`);
  };
  try {
    const report = await Promise.race([bench.run({ smoke, log, progress: (step) => watchdog.progressed(step) }), death.promise, watchdog.expired]);
    const durationS = (performance.now() - t0) / 1000;
    show(bench, report);
    const stored = { id: bench.id, title: bench.title, smoke, durationS, environment, ...report };
    writeFileSync(join(resultsDir, `${bench.name}.json`), JSON.stringify(stored, null, 2) + '\n');
    console.log(`  (${durationS.toFixed(1)} s${smoke ? `; at most ${(watchdog.longestSilenceMs / 1000).toFixed(0)} s without progress` : ''})`);
  } catch (error) {
    crashed.push(bench.id);
    console.error(`\n${bench.id} CRASHED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    writeFileSync(join(resultsDir, `${bench.name}.json`), JSON.stringify({ id: bench.id, title: bench.title, smoke, environment, crashed: String(error) }, null, 2) + '\n');
  } finally {
    watchdog.dispose();
    death.dispose();
    await ChildHost.stopAll();
  }
}

// latest.md: every benchmark's latest result, this run's or an earlier one's (`--only` reruns one).
const sections = all.flatMap((bench) => {
  const file = join(resultsDir, `${bench.name}.json`);
  if (!existsSync(file)) return [];
  const stored = JSON.parse(readFileSync(file, 'utf8')) as StoredResult & { crashed?: string };
  return stored.crashed ? [] : [resultMarkdown(stored)];
});
writeFileSync(join(resultsDir, 'latest.md'), `Results of \`npm run bench${smoke ? ':smoke' : ''}\`: each benchmark's latest run (its own timestamp below) — assembled ${new Date().toISOString()}\n\n${sections.join('\n')}`);
console.log(`\nDone in ${((performance.now() - started) / 1000).toFixed(0)} s; results in ${resultsDir}`);
if (crashed.length > 0) {
  console.error(`Crashed: ${crashed.join(', ')}`);
  process.exit(1);
}
process.exit(0);

function show(bench: Benchmark, report: BenchReport): void {
  for (const table of report.tables) printTable(table);
  if (report.targets.length > 0) printTable(targetTable(report));
}
