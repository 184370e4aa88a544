// How large the stream-diff's edits are on realistic rewrites (editCorpus.ts), streamed in several
// chunkings with the default options and with the gateway's (maxPending 96): ops cost (code units
// deleted + inserted) against the cheapest character diff and the cheapest whole-line diff.
// Run: npx tsx packages/stream-diff/test/corpusReport.ts   (the table in bench/README.md)
import { editCorpus, type CorpusEdit } from './editCorpus';
import { charOptimum, lineDiffCost, opsCost } from './editSize';
import { StreamingDiff, applyOps, type StreamingDiffOptions } from '../src/streamDiff';
import { mulberry32 } from './testGen';

/** Chunkings a stream meets: one piece, a code unit at a time, model tokens, lines, gateway flushes. */
export const chunkings: Record<string, (text: string) => string[]> = {
  whole: (text) => [text],
  unit: (text) => [...text.split('')],
  tokens: (text) => cutRandom(text, 1, 6, 1),
  lines: (text) => text.split(/(?<=\n)/),
  flushes: (text) => cutRandom(text, 8, 160, 2),
};

function cutRandom(text: string, min: number, max: number, seed: number): string[] {
  const rng = mulberry32(seed + text.length);
  const out: string[] = [];
  for (let at = 0; at < text.length; ) {
    const n = min + Math.floor(rng() * (max - min + 1));
    out.push(text.slice(at, at + n));
    at += n;
  }
  return out;
}

export const settings: Record<string, StreamingDiffOptions> = { 'default (P = 512)': {}, 'gateway (P = 96)': { maxPending: 96 } };

export interface Sample {
  edit: CorpusEdit;
  chunking: string;
  setting: string;
  cost: number;
  /** Ops cost / cheapest character diff. */
  vsChars: number;
  /** Ops cost / cheapest whole-line diff. */
  vsLines: number;
}

export function measure(edits: readonly CorpusEdit[] = editCorpus): Sample[] {
  const samples: Sample[] = [];
  for (const edit of edits) {
    const [chars, lines] = [charOptimum(edit.before, edit.after), lineDiffCost(edit.before, edit.after)];
    for (const [setting, options] of Object.entries(settings)) {
      for (const [chunking, cut] of Object.entries(chunkings)) {
        const diff = new StreamingDiff(edit.before, options);
        const ops = [...cut(edit.after).flatMap((c) => diff.push(c)), ...diff.finish()];
        if (applyOps(edit.before, ops) !== edit.after) throw new Error(`${edit.name}: ops do not rebuild the text`);
        const cost = opsCost(ops);
        samples.push({ edit, chunking, setting, cost, vsChars: cost / chars, vsLines: cost / lines });
      }
    }
  }
  return samples;
}

const rank = (xs: number[], q: number): number => [...xs].sort((a, b) => a - b)[Math.max(0, Math.ceil(q * xs.length) - 1)]!;
const fmt = (x: number): string => x.toFixed(2);

function row(label: string, samples: Sample[]): string {
  const [c, l] = [samples.map((s) => s.vsChars), samples.map((s) => s.vsLines)];
  const quartet = (xs: number[]): string => [0.5, 0.9, 0.99, 1].map((q) => fmt(rank(xs, q))).join(' | ');
  const over = samples.filter((s) => s.vsLines > 1).length;
  const byEdit = new Map<string, Set<number>>();
  for (const s of samples) {
    const key = `${s.edit.name}\n${s.setting}`;
    byEdit.set(key, (byEdit.get(key) ?? new Set()).add(s.cost));
  }
  const varying = [...byEdit.values()].filter((costs) => costs.size > 1).length;
  const overEdits = new Set(samples.filter((s) => s.vsLines > 1).map((s) => `${s.edit.name}\n${s.setting}`)).size;
  return `| ${label} | ${quartet(c)} | ${quartet(l)} | ${over} of ${samples.length} (${overEdits} edit${overEdits === 1 ? '' : 's'}) | ${varying} of ${byEdit.size} |`;
}

export function report(samples: Sample[]): string {
  const lines = [
    '| setting | ÷ chars p50 | p90 | p99 | max | ÷ lines p50 | p90 | p99 | max | runs > line diff | edits whose size depends on the chunking |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...Object.keys(settings).map((setting) => row(setting, samples.filter((s) => s.setting === setting))),
    row('all', samples),
  ];
  const worst = [...samples].sort((a, b) => b.vsLines - a.vsLines).slice(0, 8);
  lines.push('', 'Largest against the line diff:', ...worst.map((s) => `  ${fmt(s.vsLines)}× lines, ${fmt(s.vsChars)}× chars  ${s.edit.name} (${s.setting}, ${s.chunking})`));
  return lines.join('\n');
}

if (import.meta.url === `file://${globalThis.process?.argv[1]}`) console.log(report(measure()));
