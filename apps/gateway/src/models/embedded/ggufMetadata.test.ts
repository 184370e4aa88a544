import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gguf, makeBrokenGguf, makeTinyLlamaGguf, tinyLlamaVocabulary, writeGguf, type TinyLlamaOptions } from '@flint/test-kit';
import { readGgufFileInfo } from 'node-llama-cpp';
import { afterAll, describe, expect, it } from 'vitest';
import { EmbeddedModelError, type EmbeddedModelErrorCode } from './EmbeddedModelError';
import { inspectModelFile, parseGgufHeader, readGgufHeader } from './ggufMetadata';
import { ModelHostProcess } from './ModelHostProcess';

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

/** What llama.cpp does with the file when nothing checked it first: the model host's own outcome. */
async function hostOutcome(path: string): Promise<'loaded' | EmbeddedModelErrorCode> {
  return ModelHostProcess.start({ modelPath: path, contextSize: 256, warmThreads: 1, cpuThreads: 1 }).then(
    async (host) => (await host.kill(), 'loaded' as const),
    (error: unknown) => (error as EmbeddedModelError).code,
  );
}

const tiny = (options: TinyLlamaOptions = {}) => makeTinyLlamaGguf(options);

describe('reading a GGUF the test kit wrote', () => {
  it("reads the metadata and tensor table as node-llama-cpp's reader does", async () => {
    const bytes = tiny({ blockCount: 2, headCount: 4, headCountKv: 2, embeddingLength: 64, tensorType: 'f16' });
    const path = fileOf(bytes);
    const ours = (await readGgufHeader(path)).header;
    const theirs = await readGgufFileInfo(path, { readTensorInfo: true, logWarnings: false });
    const { tokens, tokenTypes, specialIds } = tinyLlamaVocabulary();

    expect(ours.version).toBe(theirs.version);
    expect(ours.metadata.get('general.architecture')).toBe('llama');
    expect(ours.metadata.get('llama.attention.head_count_kv')).toBe(2);
    expect(ours.metadata.get('llama.attention.layer_norm_rms_epsilon')).toBeCloseTo(1e-5, 10);
    expect(ours.metadata.get('tokenizer.ggml.add_bos_token')).toBe(true);
    expect(ours.metadata.get('tokenizer.ggml.tokens')).toEqual(tokens);
    expect(ours.metadata.get('tokenizer.ggml.token_type')).toEqual(tokenTypes);
    expect(ours.metadata.get('tokenizer.ggml.fim_mid_token_id')).toBe(specialIds['<fim_middle>']);
    const llama = theirs.metadata.llama as Record<string, unknown> & { attention: Record<string, unknown> };
    expect(ours.metadata.get('llama.feed_forward_length')).toBe(llama.feed_forward_length);
    expect(ours.metadata.get('llama.attention.head_count')).toBe(llama.attention.head_count);
    expect(ours.metadata.get('tokenizer.ggml.merges')).toEqual(theirs.metadata.tokenizer.ggml.merges);

    expect(ours.tensors.map((t) => [t.name, t.dims, t.ggmlType, t.offset])).toEqual(
      theirs.tensorInfo?.map((t) => [t.name, t.dimensions.map(Number), t.ggmlType, Number(t.offset)]),
    );
    expect(ours.dataOffset).toBe(theirs.infoEndOffset);
    const last = ours.tensors.at(-1)!;
    const lastBytes = last.dims.reduce((a, b) => a * b, 1) * (last.ggmlType === 0 ? 4 : 2);
    expect(ours.dataOffset + last.offset + lastBytes).toBe(bytes.length);
  });

  it('parses a header from a prefix of the file', () => {
    const bytes = tiny();
    const { tensors, dataOffset } = parseGgufHeader(bytes.subarray(0, bytes.length - 1000));
    expect(tensors.length).toBeGreaterThan(0);
    expect(dataOffset % 32).toBe(0);
  });

  it('accepts the tiny model', async () => {
    await expect(inspectModelFile(fileOf(tiny()))).resolves.toBeUndefined();
  });

  // Why the header is walked here: if this starts failing, node-llama-cpp's reader may have become
  // safe on damaged files, and ggufMetadata.ts could read with it (see its header comment).
  it("is needed because node-llama-cpp's reader takes a cut file's missing bytes for zeros", async () => {
    const cut = tiny().slice(0, 200);
    const theirs = await readGgufFileInfo(fileOf(cut), { readTensorInfo: true, logWarnings: false });
    expect(theirs.infoEndOffset).toBeGreaterThan(cut.length);
  });
});

describe('refusing model files llama.cpp would abort on, or that are not whole', () => {
  const cases: Array<[string, () => Uint8Array, EmbeddedModelErrorCode, RegExp]> = [
    ['llama.feed_forward_length is missing', () => makeBrokenGguf('missing_feed_forward_length'), 'missing_metadata', /llama\.feed_forward_length/],
    ['llama.attention.head_count is missing', () => makeBrokenGguf('missing_head_count'), 'missing_metadata', /llama\.attention\.head_count/],
    ['llama.feed_forward_length is 0', () => tiny({ overrideMetadata: { 'llama.feed_forward_length': gguf.u32(0) } }), 'invalid_metadata', /feed_forward_length/],
    ['llama.attention.head_count_kv is 0', () => tiny({ overrideMetadata: { 'llama.attention.head_count_kv': gguf.u32(0) } }), 'invalid_metadata', /head_count_kv/],
    ['the head count is a string', () => tiny({ overrideMetadata: { 'llama.attention.head_count': gguf.str('2') } }), 'invalid_metadata', /head_count/],
    ['the vocabulary is empty', () => tiny({ overrideMetadata: { 'tokenizer.ggml.tokens': gguf.strs([]) } }), 'invalid_metadata', /tokenizer\.ggml\.tokens/],
    ['the tensor data is cut off', () => makeBrokenGguf('truncated'), 'truncated', /ends before the data of tensor/],
    ['the header is cut off', () => tiny().slice(0, 200), 'truncated', /ends inside its header/],
    ['it is not a GGUF', () => makeBrokenGguf('not_gguf'), 'not_gguf', /not a GGUF/],
    ['it is empty', () => new Uint8Array(0), 'truncated', /header/],
    ['the GGUF version is unknown', () => withVersion(tiny(), 1), 'unsupported_version', /version 1/],
    ['a string length is absurd', () => withFirstTokenLength(tiny(), 1n << 31n), 'truncated', /ends inside its header/],
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

describe('the line between these checks and llama.cpp (the real model host)', () => {
  it('refuses what aborts llama.cpp, and leaves to llama.cpp what it refuses or survives by itself', async () => {
    const files: Array<[string, Uint8Array, 'refused' | 'passed', 'loaded' | EmbeddedModelErrorCode]> = [
      ['head_count_kv 0', tiny({ overrideMetadata: { 'llama.attention.head_count_kv': gguf.u32(0) } }), 'refused', 'host_crashed'],
      ['block_count a string', tiny({ overrideMetadata: { 'llama.block_count': gguf.str('2') } }), 'passed', 'load_failed'],
      ['heads that do not divide the width', tiny({ overrideMetadata: { 'llama.attention.head_count': gguf.u32(3) } }), 'passed', 'load_failed'],
      ['no tensors', writeGguf({ metadata: minimalLlamaMetadata(), tensors: [] }), 'passed', 'load_failed'],
      ['an eos token outside the vocabulary', tiny({ overrideMetadata: { 'tokenizer.ggml.eos_token_id': gguf.u32(99_999) } }), 'passed', 'loaded'],
    ];
    const outcomes = await Promise.all(
      files.map(async ([what, bytes]) => {
        const path = fileOf(bytes);
        const inspected = await inspectModelFile(path).then(() => 'passed', () => 'refused');
        return [what, inspected, await hostOutcome(path)];
      }),
    );
    expect(outcomes).toEqual(files.map(([what, , inspected, host]) => [what, inspected, host]));
  }, 60_000);
});

function withVersion(bytes: Uint8Array, version: number): Uint8Array {
  const copy = bytes.slice();
  new DataView(copy.buffer).setUint32(4, version, true);
  return copy;
}

/** The first token's length set to `length`: the damage that aborts Node inside node-llama-cpp's reader. */
function withFirstTokenLength(bytes: Uint8Array, length: bigint): Uint8Array {
  const key = new TextEncoder().encode('tokenizer.ggml.tokens');
  const at = bytes.findIndex((_, i) => key.every((b, j) => bytes[i + j] === b));
  const copy = bytes.slice();
  // key, then value type (u32), item type (u32), item count (u64), then the first string's length.
  new DataView(copy.buffer).setBigUint64(at + key.length + 16, length, true);
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
