import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gguf, makeBrokenGguf, makeTinyLlamaGguf, tinyLlamaVocabulary, writeGguf, type TinyLlamaOptions } from '@flint/test-kit';
import { readGgufFileInfo } from 'node-llama-cpp';
import { afterAll, describe, expect, it } from 'vitest';
import { EmbeddedModelError, type EmbeddedModelErrorCode } from './EmbeddedModelError';
import { inspectModelFile, parseGgufHeader, readGgufHeader } from './ggufMetadata';

const dir = mkdtempSync(join(tmpdir(), 'flint-gguf-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let fileCount = 0;
function fileOf(bytes: Uint8Array): string {
  const path = join(dir, `model-${fileCount++}.gguf`);
  writeFileSync(path, bytes);
  return path;
}

async function refusal(bytes: Uint8Array): Promise<EmbeddedModelError> {
  const error = await inspectModelFile(fileOf(bytes)).then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(EmbeddedModelError);
  return error as EmbeddedModelError;
}

const tiny = (options: TinyLlamaOptions = {}) => makeTinyLlamaGguf(options);

describe('reading a GGUF the test kit wrote', () => {
  it('round-trips header, typed metadata and the tensor table', () => {
    const bytes = tiny({ blockCount: 2, headCount: 4, headCountKv: 2, embeddingLength: 64, tensorType: 'f16' });
    const header = parseGgufHeader(bytes);
    const { tokens, tokenTypes, specialIds } = tinyLlamaVocabulary();
    expect(header.version).toBe(3);
    expect(header.alignment).toBe(32);
    expect(header.dataOffset % 32).toBe(0);
    expect(header.metadata.get('general.architecture')).toEqual({ type: 'string', value: 'llama' });
    expect(header.metadata.get('llama.attention.head_count_kv')).toEqual({ type: 'uint32', value: 2 });
    expect(header.metadata.get('llama.attention.layer_norm_rms_epsilon')?.type).toBe('float32');
    expect(header.metadata.get('llama.attention.layer_norm_rms_epsilon')?.value).toBeCloseTo(1e-5, 10);
    expect(header.metadata.get('tokenizer.ggml.add_bos_token')).toEqual({ type: 'bool', value: true });
    expect(header.metadata.get('tokenizer.ggml.tokens')).toEqual({ type: 'array', itemType: 'string', value: tokens });
    expect(header.metadata.get('tokenizer.ggml.token_type')).toEqual({ type: 'array', itemType: 'int32', value: tokenTypes });
    expect(header.metadata.get('tokenizer.ggml.fim_mid_token_id')?.value).toBe(specialIds['<fim_middle>']);

    expect(header.tensors).toHaveLength(3 + 2 * 9);
    const q = header.tensors.find((t) => t.name === 'blk.1.attn_k.weight')!;
    expect(q.dims).toEqual([64, 32]); // [in, out]: 4 heads of 16, 2 of them for K/V
    expect(q.ggmlType).toBe(1); // f16
    expect(header.tensors.every((t) => t.offset % 32 === 0)).toBe(true);
    const last = header.tensors.at(-1)!;
    const lastBytes = last.dims.reduce((a, b) => a * b, 1) * (last.ggmlType === 0 ? 4 : 2);
    expect(header.dataOffset + last.offset + lastBytes).toBe(bytes.length);
  });

  it("agrees with node-llama-cpp's own GGUF parser", async () => {
    const path = fileOf(tiny());
    const theirs = await readGgufFileInfo(path, { readTensorInfo: true, logWarnings: false });
    const ours = (await readGgufHeader(path)).header;
    expect(theirs.version).toBe(ours.version);
    expect(Number(theirs.tensorCount)).toBe(ours.tensors.length);
    const llama = theirs.metadata.llama as Record<string, unknown> & { attention: Record<string, unknown> };
    expect(llama.feed_forward_length).toBe(ours.metadata.get('llama.feed_forward_length')?.value);
    expect(llama.attention.head_count).toBe(ours.metadata.get('llama.attention.head_count')?.value);
    expect(theirs.metadata.tokenizer.ggml.merges).toEqual(ours.metadata.get('tokenizer.ggml.merges')?.value);
    expect(theirs.tensorInfo?.map((t) => [t.name, t.dimensions.map(Number), Number(t.offset)])).toEqual(
      ours.tensors.map((t) => [t.name, t.dims, t.offset]),
    );
  });

  it('accepts the tiny model and summarises it', async () => {
    const summary = await inspectModelFile(fileOf(tiny()));
    expect(summary).toEqual({ architecture: 'llama', contextLength: 256, vocabularySize: tinyLlamaVocabulary().tokens.length, canInfill: true });
  });

  it('says a model without FIM tokens cannot infill', async () => {
    const summary = await inspectModelFile(fileOf(tiny({ omitMetadata: ['tokenizer.ggml.fim_mid_token_id'] })));
    expect(summary.canInfill).toBe(false);
  });
});

describe('refusing model files llama.cpp would crash on or reject', () => {
  const cases: Array<[string, () => Uint8Array, EmbeddedModelErrorCode, RegExp]> = [
    ['llama.feed_forward_length is missing (llama.cpp aborts)', () => makeBrokenGguf('missing_feed_forward_length'), 'missing_metadata', /llama\.feed_forward_length/],
    ['llama.attention.head_count is missing (llama.cpp aborts)', () => makeBrokenGguf('missing_head_count'), 'missing_metadata', /llama\.attention\.head_count/],
    ['the tensor data is cut off', () => makeBrokenGguf('truncated'), 'truncated', /ends before the data of tensor/],
    ['the header is cut off', () => tiny().slice(0, 200), 'truncated', /ends inside its header/],
    ['it is not a GGUF', () => makeBrokenGguf('not_gguf'), 'not_gguf', /not a GGUF/],
    ['it is empty', () => new Uint8Array(0), 'truncated', /header/],
    ['the GGUF version is unknown', () => withVersion(tiny(), 1), 'unsupported_version', /version 1/],
    ['a hyperparameter has the wrong type', () => tiny({ overrideMetadata: { 'llama.block_count': gguf.str('2') } }), 'invalid_metadata', /llama\.block_count/],
    ['a hyperparameter is zero', () => tiny({ overrideMetadata: { 'llama.embedding_length': gguf.u32(0) } }), 'invalid_metadata', /embedding_length/],
    ['heads do not divide the width', () => tiny({ overrideMetadata: { 'llama.attention.head_count': gguf.u32(3) } }), 'invalid_metadata', /head_count/],
    ['a special token id is outside the vocabulary', () => tiny({ overrideMetadata: { 'tokenizer.ggml.eos_token_id': gguf.u32(99_999) } }), 'invalid_metadata', /eos_token_id/],
    ['gpt2 BPE has no merges', () => tiny({ omitMetadata: ['tokenizer.ggml.merges'] }), 'missing_metadata', /merges/],
    ['token types do not match the tokens', () => tiny({ overrideMetadata: { 'tokenizer.ggml.token_type': gguf.i32s([1, 1]) } }), 'invalid_metadata', /token_type/],
    ['there are no tensors', () => writeGguf({ metadata: minimalLlamaMetadata(), tensors: [] }), 'corrupt', /no tensors/],
  ];

  for (const [what, build, code, message] of cases) {
    it(`refuses a file where ${what}`, async () => {
      const error = await refusal(build());
      expect(error.code).toBe(code);
      expect(error.message).toMatch(message);
    });
  }

  it('refuses a path with no file', async () => {
    const error = await inspectModelFile(join(dir, 'nope.gguf')).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'not_found' });
  });
});

function withVersion(bytes: Uint8Array, version: number): Uint8Array {
  const copy = bytes.slice();
  new DataView(copy.buffer).setUint32(4, version, true);
  return copy;
}

function minimalLlamaMetadata() {
  const { tokens } = tinyLlamaVocabulary();
  return {
    'general.architecture': gguf.str('llama'),
    'llama.context_length': gguf.u32(64),
    'llama.embedding_length': gguf.u32(8),
    'llama.block_count': gguf.u32(1),
    'llama.feed_forward_length': gguf.u32(16),
    'llama.attention.head_count': gguf.u32(2),
    'llama.attention.layer_norm_rms_epsilon': gguf.f32(1e-5),
    'tokenizer.ggml.model': gguf.str('gpt2'),
    'tokenizer.ggml.tokens': gguf.strs(tokens),
    'tokenizer.ggml.merges': gguf.strs([]),
  };
}
