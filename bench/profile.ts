/**
 * `npx tsx bench/profile.ts <file.cpuprofile> [limit]`: the hottest functions and files of a CPU
 * profile. Profiles of the benchmark servers: `BENCH_CPU_PROF=1 npm run bench -- --only B2`
 * writes one per child process to bench/results/profiles/.
 */
import { topFunctions } from './lib/topFunctions';
import { printTable } from './lib/printTable';

const [file, limit] = process.argv.slice(2);
if (!file) {
  console.error('usage: npx tsx bench/profile.ts <file.cpuprofile> [limit]');
  process.exit(2);
}
const top = topFunctions(file, Number(limit ?? 25));
console.log(`${file}: ${top.totalMs.toFixed(0)} ms sampled`);
printTable({ title: 'self time by function', columns: ['function', 'self %', 'self ms'], rows: top.byFunction.map((h) => [h.name, h.selfPercent, h.selfMs]) });
printTable({ title: 'self time by file', columns: ['file', 'self %', 'self ms'], rows: top.byFile.map((h) => [h.name, h.selfPercent, h.selfMs]) });
