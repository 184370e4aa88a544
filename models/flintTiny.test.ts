/**
 * The committed default model, models/flint-tiny.gguf, against the recipe that produced it
 * (models/recipe): it passes the gateway's GGUF validation, node-llama-cpp tokenizes exactly like
 * the recipe's BPE, the FIM control tokens are single ids, and greedy generation through the
 * EmbeddedProvider (child process, llama.cpp) reproduces PyTorch's greedy tokens.
 * CI never retrains: the fixtures are written by models/recipe/fixtures.py at export time.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getLlama, LlamaLogLevel, type Llama, type LlamaModel } from 'node-llama-cpp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelEvent } from '../apps/gateway/src/core/ports/ModelProvider';
import { EmbeddedProvider } from '../apps/gateway/src/models/embedded/EmbeddedProvider';
import { inspectModelFile } from '../apps/gateway/src/models/embedded/ggufMetadata';

const here = dirname(fileURLToPath(import.meta.url));
const modelPath = join(here, 'flint-tiny.gguf');

interface TokenizerFixture {
  special: Record<string, number>;
  vocabSize: number;
  cases: Array<{ text: string; ids: number[] }>;
}
interface GenerationCase {
  kind: 'infill' | 'complete';
  prefix?: string;
  suffix?: string;
  prompt?: string;
  promptIds: number[];
  expectedIds: number[];
  expectedText: string;
  endsWithEos: boolean;
}
const tokenizerFixture = JSON.parse(readFileSync(join(here, 'fixtures', 'tokenizer.json'), 'utf8')) as TokenizerFixture;
const generation = (JSON.parse(readFileSync(join(here, 'fixtures', 'generation.json'), 'utf8')) as { cases: GenerationCase[] }).cases;

async function collect(events: AsyncIterable<ModelEvent>): Promise<{ text: string; finishReason: string | null; outputTokens: number }> {
  let text = '';
  let finishReason: string | null = null;
  let outputTokens = 0;
  for await (const event of events) {
    if (event.type === 'text') text += event.text;
    if (event.type === 'usage') outputTokens = event.outputTokens;
    if (event.type === 'done') finishReason = event.finishReason;
  }
  return { text, finishReason, outputTokens };
}

describe('flint-tiny.gguf', () => {
  it('passes the gateway validation that runs before llama.cpp sees a file', async () => {
    // It throws a typed error for a file it refuses.
    await expect(inspectModelFile(modelPath)).resolves.toBeUndefined();
  });

  describe('tokenizer (node-llama-cpp in this process)', () => {
    let llama: Llama;
    let model: LlamaModel;
    beforeAll(async () => {
      llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
      model = await llama.loadModel({ modelPath, gpuLayers: 0 });
    });
    afterAll(async () => {
      await model?.dispose();
      await llama?.dispose();
    });

    it('has the recipe vocabulary, FIM tokens and no BOS prepended', () => {
      expect(model.fileInfo.metadata.tokenizer.ggml.tokens.length).toBe(tokenizerFixture.vocabSize);
      expect(model.tokens.infill.prefix).toBe(tokenizerFixture.special['<fim_prefix>']);
      expect(model.tokens.infill.suffix).toBe(tokenizerFixture.special['<fim_suffix>']);
      expect(model.tokens.infill.middle).toBe(tokenizerFixture.special['<fim_middle>']);
      expect(model.tokens.eos).toBe(tokenizerFixture.special['<eos>']);
      expect(model.tokens.shouldPrependBosToken).toBe(false);
    });

    it('tokenizes every fixture text to the recipe tokenizer ids', () => {
      expect(tokenizerFixture.cases.length).toBeGreaterThan(20);
      for (const { text, ids } of tokenizerFixture.cases) {
        expect({ text, ids: Array.from(model.tokenize(text, false)) }).toEqual({ text, ids });
        expect(model.detokenize(model.tokenize(text, false))).toBe(text);
      }
    });

    it('turns the special tokens into single ids only when asked, so FIM prompts round-trip', () => {
      for (const [name, id] of Object.entries(tokenizerFixture.special)) {
        expect(Array.from(model.tokenize(name, true))).toEqual([id]);
        expect(model.tokenize(name, false).length).toBeGreaterThan(1); // typed in a file, it is text
      }
      const s = tokenizerFixture.special;
      const prompt = '<fim_prefix>const x = <fim_suffix>;\n<fim_middle>';
      const ids = Array.from(model.tokenize(prompt, true));
      expect(ids[0]).toBe(s['<fim_prefix>']);
      expect(ids.at(-1)).toBe(s['<fim_middle>']);
      expect(ids.filter((t) => t === s['<fim_suffix>'])).toHaveLength(1);
      expect(ids).toEqual([
        s['<fim_prefix>']!, ...model.tokenize('const x = ', false), s['<fim_suffix>']!, ...model.tokenize(';\n', false), s['<fim_middle>']!,
      ]);
    });
  });

  describe('generation through the EmbeddedProvider (child process)', () => {
    let provider: EmbeddedProvider;
    beforeAll(() => {
      // Raw text in, continuation out: this model has no chat format.
      provider = new EmbeddedProvider({ modelPath, warmThreads: 1, promptTemplate: (messages) => messages.at(-1)?.content ?? '' });
    });
    afterAll(() => provider.close());

    it('fills in the middle and completes code exactly as PyTorch greedy decoding does', async () => {
      expect(generation.length).toBeGreaterThan(0);
      for (const c of generation) {
        // Cut where PyTorch's top-2 gap got small, or at its <eos>: both sides must agree that far.
        const maxOutputTokens = Math.max(1, c.expectedIds.length + (c.endsWithEos ? 1 : 0));
        const signal = new AbortController().signal;
        const events =
          c.kind === 'infill'
            ? provider.infill(c.prefix!, c.suffix!, { maxOutputTokens }, signal)
            : provider.stream({ model: 'flint-tiny', messages: [{ role: 'user', content: c.prompt! }], maxOutputTokens }, signal);
        const { text, finishReason } = await collect(events);
        if (c.expectedIds.length === 0 && !c.endsWithEos) continue; // nothing confident to compare
        expect({ prompt: c.prefix ?? c.prompt, text }).toEqual({ prompt: c.prefix ?? c.prompt, text: c.expectedText });
        if (c.endsWithEos) expect(finishReason).toBe('stop');
      }
    });

    it('streams a longer completion of code', async () => {
      const { text, outputTokens, finishReason } = await collect(
        provider.infill('export function clamp(value: number, min: number, max: number): number {\n  ', '\n}\n', { maxOutputTokens: 48 }, new AbortController().signal),
      );
      expect(outputTokens).toBeGreaterThan(0);
      expect(outputTokens).toBeLessThanOrEqual(48);
      expect(['stop', 'length']).toContain(finishReason);
      expect(text).not.toContain('<fim_');
    });
  });
});
