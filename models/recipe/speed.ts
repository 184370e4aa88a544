/**
 * Measures the committed model end to end through the gateway's EmbeddedProvider (child process,
 * node-llama-cpp, 1 CPU thread): first-token latency and tokens/s, for completion and infill.
 *
 *   npx tsx models/recipe/speed.ts [models/flint-tiny.gguf] [runs]
 *
 * Prints one JSON line per run and a median summary. Numbers depend on machine load.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ModelEvent } from '../../apps/gateway/src/models/ModelProvider';
import { EmbeddedProvider } from '../../apps/gateway/src/models/embedded/EmbeddedProvider';

const modelPath = process.argv[2] ?? 'models/flint-tiny.gguf';
const runs = Number(process.argv[3] ?? 7);
const provider = new EmbeddedProvider({ modelPath, warmThreads: 1, cpuThreads: 1, promptTemplate: (m) => m.at(-1)?.content ?? '' });

// A real source file from this repository as the prompt (~200 tokens: the facts file's setting).
const source = readFileSync(join('apps', 'gateway', 'src', 'models', 'embedded', 'EmbeddedProvider.ts'), 'utf8');

async function measure(events: AsyncIterable<ModelEvent>) {
  const sent = performance.now();
  let first = 0;
  let inputTokens = 0;
  let outputTokens = 0;
  for await (const e of events) {
    if (e.type === 'text' && first === 0) first = performance.now();
    if (e.type === 'usage') ({ inputTokens, outputTokens } = e);
  }
  const done = performance.now();
  return {
    inputTokens,
    outputTokens,
    firstTokenMs: Math.round((first - sent) * 10) / 10,
    tokensPerSecond: Math.round(outputTokens / ((done - sent) / 1000)),
    decodeTokensPerSecond: Math.round((outputTokens - 1) / ((done - first) / 1000)),
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
try {
  const signal = new AbortController().signal;
  await measure(provider.stream({ model: 'flint-tiny', messages: [{ role: 'user', content: 'const x = ' }], maxOutputTokens: 4 }, signal)); // start the host
  const summary: Record<string, unknown> = { modelPath };
  for (const kind of ['complete', 'infill'] as const) {
    const results = [];
    for (let run = 0; run < runs; run++) {
      // A different start per run: no KV cache reuse between runs.
      const at = 400 + run * 97;
      const prefix = `// run ${run}\n` + source.slice(at, at + 600);
      const suffix = source.slice(at + 600, at + 800);
      const events =
        kind === 'complete'
          ? provider.stream({ model: 'flint-tiny', messages: [{ role: 'user', content: prefix }], maxOutputTokens: 256 }, signal)
          : provider.infill(prefix, suffix, { maxOutputTokens: 64 }, signal);
      const r = await measure(events);
      results.push(r);
      console.log(JSON.stringify({ kind, ...r }));
    }
    summary[kind] = {
      medianInputTokens: median(results.map((r) => r.inputTokens)),
      medianOutputTokens: median(results.map((r) => r.outputTokens)),
      medianFirstTokenMs: median(results.map((r) => r.firstTokenMs)),
      medianTokensPerSecond: median(results.map((r) => r.tokensPerSecond)),
      medianDecodeTokensPerSecond: median(results.map((r) => r.decodeTokensPerSecond)),
    };
  }
  console.log(JSON.stringify(summary));
} finally {
  await provider.close();
}
