import type { BenchReport } from './Benchmark';
import type { Environment } from './describeEnvironment';
import { markdownTable, type Table } from './printTable';

export interface StoredResult extends BenchReport {
  id: string;
  title: string;
  environment: Environment;
  durationS: number;
}

export function targetTable(report: BenchReport): Table {
  return {
    title: 'Targets',
    columns: ['target', 'wanted', 'measured', 'met'],
    rows: report.targets.map((t) => [t.name, t.target, t.actual, t.met === null ? 'n/a' : t.met ? 'MET' : 'MISSED']),
  };
}

/** One benchmark's result as markdown (bench/results/latest.md, and from there bench/README.md). */
export function resultMarkdown(result: StoredResult): string {
  const env = result.environment;
  const lines = [
    `### ${result.id} ${result.title}`,
    '',
    `_${env.startedAt}, load average ${env.loadAverageAtStart.join(' / ')}, a 1 ms timer fired after p50 ${env.timerLatencyMs.p50} / p99 ${env.timerLatencyMs.p99} ms, ${result.durationS.toFixed(0)} s._`,
  ];
  for (const table of result.tables) {
    lines.push('', `**${table.title}**`, '', markdownTable(table));
    if (table.notes?.length) lines.push('', ...table.notes.map((note) => `- ${note}`));
  }
  if (result.targets.length > 0) lines.push('', markdownTable(targetTable(result)));
  return lines.join('\n') + '\n';
}
