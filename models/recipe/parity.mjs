#!/usr/bin/env node
// Parity between the recipe (PyTorch + Python tokenizer) and llama.cpp via node-llama-cpp.
// Input: a JSON file written by fixtures.py:
//   { tokenize: [{text, ids}], greedy: [{prompt, expected, probs?: [[id, p], ...]}] }
// Output (stdout): JSON report { tokenize: {checked, mismatches, examples}, greedy: [...], maxProbDiff }
// Greedy parity holds when identicalPrefix === expected (and got === expected: the same length).
// Run from the repository root:  node models/recipe/parity.mjs models/flint-tiny.gguf models/.cache/parity.json
import { readFileSync } from 'node:fs';
import { getLlama, LlamaLogLevel } from 'node-llama-cpp';

const [modelPath, fixturePath, threadsArg] = process.argv.slice(2);
const fixture = JSON.parse(readFileSync(fixturePath, 'utf8'));
const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
const model = await llama.loadModel({ modelPath, gpuLayers: 0 });

const report = { tokenize: { checked: 0, mismatches: 0, examples: [] }, greedy: [], maxProbDiff: 0 };
for (const { text, ids } of fixture.tokenize ?? []) {
  const got = Array.from(model.tokenize(text, false));
  report.tokenize.checked++;
  if (got.length !== ids.length || got.some((t, i) => t !== ids[i])) {
    report.tokenize.mismatches++;
    if (report.tokenize.examples.length < 5) report.tokenize.examples.push({ text, expected: ids, got });
  }
}

if ((fixture.greedy ?? []).length > 0) {
  const context = await model.createContext({ contextSize: model.trainContextSize, threads: Number(threadsArg ?? 1), sequences: 1 });
  for (const { prompt, expected, probs } of fixture.greedy) {
    const sequence = context.getSequence();
    // First step: the full next-token distribution, compared with PyTorch's.
    if (probs) {
      const out = await sequence.controlledEvaluate(prompt.map((t, i) => (i === prompt.length - 1 ? [t, { generateNext: { probabilities: true } }] : t)));
      const dist = out[prompt.length - 1]?.next?.probabilities;
      for (const [id, p] of probs) report.maxProbDiff = Math.max(report.maxProbDiff, Math.abs((dist?.get(id) ?? 0) - p));
      await sequence.clearHistory();
    }
    const got = [];
    for await (const token of sequence.evaluate(prompt, { temperature: 0 })) {
      got.push(token);
      if (got.length >= expected.length) break;
    }
    // llama.cpp ends the generation at an end-of-generation token without yielding it.
    const eog = model.tokens.eos;
    const want = expected.at(-1) === eog ? expected.slice(0, -1) : expected;
    let same = 0;
    while (same < want.length && got[same] === want[same]) same++;
    report.greedy.push({ promptTokens: prompt.length, expected: want.length, endsWithEos: want.length < expected.length, got: got.length, identicalPrefix: same });
    sequence.dispose();
  }
  await context.dispose();
}
await model.dispose();
await llama.dispose();
console.log(JSON.stringify(report));
