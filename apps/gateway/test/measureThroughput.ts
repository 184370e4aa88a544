/**
 * Measures (does not assert) the embedded provider end to end on a random-weight llama written
 * on the spot: first-token latency and generation speed through the child process and IPC.
 *
 *   npx tsx apps/gateway/test/measureThroughput.ts [tiny|1m] [runs]
 *
 * Prints one JSON line per run and a median summary.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeTinyLlamaGguf, type TinyLlamaOptions } from '@flint/test-kit';
import type { ModelRequest } from '../src/core/ports/ModelProvider';
import { EmbeddedProvider } from '../src/models/embedded/EmbeddedProvider';

const presets: Record<string, TinyLlamaOptions> = {
  /** The test suite's model: ~0.1M parameters. */
  tiny: { contextLength: 1024 },
  /** Near the ~1M-parameter point of EMBEDDED-MODEL-FACTS. */
  '1m': { contextLength: 1024, embeddingLength: 128, blockCount: 4, headCount: 4, feedForwardLength: 384 },
};

const presetName = process.argv[2] ?? 'tiny';
const runs = Number(process.argv[3] ?? 5);
const preset = presets[presetName];
if (!preset) throw new Error(`unknown preset ${presetName}; one of ${Object.keys(presets).join(', ')}`);

const dir = mkdtempSync(join(tmpdir(), 'flint-measure-'));
const modelPath = join(dir, `${presetName}.gguf`);
writeFileSync(modelPath, makeTinyLlamaGguf(preset));
const provider = new EmbeddedProvider({ modelPath, contextSize: 1024, warmThreads: 1 });

// ~200 prompt tokens, as in the facts file; a different prompt per run so no KV cache is reused.
const request = (run: number): ModelRequest => ({
  model: presetName,
  messages: [{ role: 'user', content: `// run ${run}\n` + 'export function add(a: number, b: number): number { return a + b; }\n'.repeat(3) }],
  maxOutputTokens: 256,
});

try {
  const startedMs = performance.now();
  for await (const _event of provider.stream(request(-1), new AbortController().signal)); // starts the host
  console.log(JSON.stringify({ hostStartAndFirstRequestMs: Math.round(performance.now() - startedMs) }));

  const results: Array<{ firstTokenMs: number; tokensPerSecond: number; decodeTokensPerSecond: number }> = [];
  for (let run = 0; run < runs; run++) {
    const sentMs = performance.now();
    let firstTextMs = 0;
    let inputTokens = 0;
    let outputTokens = 0;
    for await (const event of provider.stream(request(run), new AbortController().signal)) {
      if (event.type === 'text' && firstTextMs === 0) firstTextMs = performance.now();
      if (event.type === 'usage') ({ inputTokens, outputTokens } = event);
    }
    const doneMs = performance.now();
    const result = {
      inputTokens,
      outputTokens,
      firstTokenMs: firstTextMs === 0 ? Number.NaN : Math.round((firstTextMs - sentMs) * 10) / 10,
      /** Output tokens over the whole request, prompt evaluation included. */
      tokensPerSecond: Math.round(outputTokens / ((doneMs - sentMs) / 1000)),
      /** Generation alone: from the first text to the end. */
      decodeTokensPerSecond: Math.round((outputTokens - 1) / ((doneMs - firstTextMs) / 1000)),
    };
    results.push(result);
    console.log(JSON.stringify(result));
  }
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
  console.log(JSON.stringify({
    preset: presetName,
    medianFirstTokenMs: median(results.map((r) => r.firstTokenMs)),
    medianTokensPerSecond: median(results.map((r) => r.tokensPerSecond)),
    medianDecodeTokensPerSecond: median(results.map((r) => r.decodeTokensPerSecond)),
  }));
} finally {
  await provider.close();
  rmSync(dir, { recursive: true, force: true });
}
