/**
 * Reads and validates a GGUF file's header, metadata and tensor table before llama.cpp sees it.
 * llama.cpp aborts the whole process on some malformed files (a missing
 * `llama.feed_forward_length` trips a GGML_ASSERT), so the gateway checks first and turns every
 * problem into an `EmbeddedModelError` with a sentence a user can act on. The model host runs
 * out of process as a second line of defence for what these checks miss.
 */
import { open } from 'node:fs/promises';
import { EmbeddedModelError } from './EmbeddedModelError';

export type GgufScalar = number | bigint | boolean | string;
export type GgufMetadataValue = GgufScalar | readonly GgufScalar[];

export interface GgufMetadataEntry {
  /** gguf.h type name; `itemType` says what an array holds. */
  type: GgufTypeName;
  itemType?: GgufTypeName;
  value: GgufMetadataValue;
}

export interface GgufTensorInfo {
  name: string;
  dims: number[];
  /** ggml_type code. */
  ggmlType: number;
  /** Relative to `dataOffset`. */
  offset: number;
}

export interface GgufHeader {
  version: number;
  metadata: Map<string, GgufMetadataEntry>;
  tensors: GgufTensorInfo[];
  alignment: number;
  /** Absolute file offset where tensor data starts. */
  dataOffset: number;
}

/** What the provider needs to know about a model that passed validation. */
export interface GgufModelSummary {
  architecture: string;
  contextLength: number;
  vocabularySize: number;
  /** The model has FIM prefix/suffix/middle tokens, so `infill` can work. */
  canInfill: boolean;
}

const TYPE_NAMES = ['uint8', 'int8', 'uint16', 'int16', 'uint32', 'int32', 'float32', 'bool', 'string', 'array', 'uint64', 'int64', 'float64'] as const;
export type GgufTypeName = (typeof TYPE_NAMES)[number];

const GGUF_MAGIC = 0x46554747; // "GGUF", little-endian
const GGML_MAX_DIMS = 4;
const MAX_HEADER_BYTES = 512 * 1024 * 1024;

/** Thrown inside the parser when the bytes end early; the caller decides: read more, or `truncated`. */
class OutOfBytes extends Error {}

/**
 * Parses the part of a GGUF file before the tensor data. `bytes` is a prefix of the file;
 * throws `OutOfBytes` when it is too short, `EmbeddedModelError` when the content is wrong.
 */
export function parseGgufHeader(bytes: Uint8Array): GgufHeader {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const decoder = new TextDecoder('utf-8', { fatal: false });
  let at = 0;
  const need = (n: number) => {
    if (at + n > bytes.length) throw new OutOfBytes();
  };
  const u32 = () => (need(4), (at += 4), view.getUint32(at - 4, true));
  const u64 = () => {
    need(8);
    at += 8;
    const value = view.getBigUint64(at - 8, true);
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw corrupt(`a count or size of ${value} at byte ${at - 8}`);
    return Number(value);
  };
  const string = () => {
    const length = u64();
    need(length);
    at += length;
    return decoder.decode(bytes.subarray(at - length, at));
  };
  const scalar = (type: GgufTypeName): GgufScalar => {
    switch (type) {
      case 'uint8': return (need(1), view.getUint8(at++));
      case 'int8': return (need(1), view.getInt8(at++));
      case 'uint16': return (need(2), (at += 2), view.getUint16(at - 2, true));
      case 'int16': return (need(2), (at += 2), view.getInt16(at - 2, true));
      case 'uint32': return u32();
      case 'int32': return (need(4), (at += 4), view.getInt32(at - 4, true));
      case 'float32': return (need(4), (at += 4), view.getFloat32(at - 4, true));
      case 'bool': return (need(1), view.getUint8(at++) !== 0);
      case 'string': return string();
      case 'uint64': return (need(8), (at += 8), narrow(view.getBigUint64(at - 8, true)));
      case 'int64': return (need(8), (at += 8), narrow(view.getBigInt64(at - 8, true)));
      case 'float64': return (need(8), (at += 8), view.getFloat64(at - 8, true));
      case 'array': throw corrupt('an array nested in an array');
    }
  };
  const typeName = (code: number, where: string): GgufTypeName => {
    const name = TYPE_NAMES[code];
    if (name === undefined) throw corrupt(`unknown value type ${code} for ${where}`);
    return name;
  };

  need(4);
  if (view.getUint32(0, true) !== GGUF_MAGIC) {
    throw new EmbeddedModelError('not_gguf', 'The model file is not a GGUF file (it does not start with "GGUF"). Point Flint at a .gguf model.');
  }
  at = 4;
  const version = u32();
  if (version !== 2 && version !== 3) {
    throw new EmbeddedModelError('unsupported_version', `The model file is GGUF version ${version}; Flint reads versions 2 and 3. Convert the model with a current llama.cpp.`);
  }
  const tensorCount = u64();
  const metadataCount = u64();
  // Each entry takes at least 13 bytes, each tensor info 28: larger counts are garbage, not a big file.
  if (metadataCount > bytes.length || tensorCount > MAX_HEADER_BYTES / 28) throw new OutOfBytes();

  const metadata = new Map<string, GgufMetadataEntry>();
  for (let i = 0; i < metadataCount; i++) {
    const key = string();
    const type = typeName(u32(), key);
    if (type !== 'array') {
      metadata.set(key, { type, value: scalar(type) });
      continue;
    }
    const itemType = typeName(u32(), key);
    const count = u64();
    need(count); // every item is at least one byte: refuse absurd counts before allocating
    const items: GgufScalar[] = [];
    for (let j = 0; j < count; j++) items.push(scalar(itemType));
    metadata.set(key, { type, itemType, value: items });
  }

  const alignmentEntry = metadata.get('general.alignment');
  const alignment = alignmentEntry === undefined ? 32 : alignmentEntry.value;
  if (typeof alignment !== 'number' || alignment <= 0 || !Number.isInteger(alignment) || (alignment & (alignment - 1)) !== 0) {
    throw corrupt('general.alignment is not a power of two');
  }

  const tensors: GgufTensorInfo[] = [];
  for (let i = 0; i < tensorCount; i++) {
    const name = string();
    const dimCount = u32();
    if (dimCount > GGML_MAX_DIMS) throw corrupt(`tensor ${name} has ${dimCount} dimensions`);
    const dims: number[] = [];
    for (let d = 0; d < dimCount; d++) dims.push(u64());
    tensors.push({ name, dims, ggmlType: u32(), offset: u64() });
  }
  return { version, metadata, tensors, alignment, dataOffset: Math.ceil(at / alignment) * alignment };
}

/** Reads a GGUF file's header from disk: a growing prefix, so a 10 GB model costs a few MB. */
export async function readGgufHeader(path: string): Promise<{ header: GgufHeader; fileBytes: number }> {
  let file;
  try {
    file = await open(path, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new EmbeddedModelError('not_found', `The model file ${path} does not exist. Check the configured model path.`);
    throw new EmbeddedModelError('unreadable', `The model file ${path} cannot be opened (${code ?? 'unknown error'}). Check its path and permissions.`);
  }
  try {
    const { size } = await file.stat();
    let prefixBytes = Math.min(size, 1024 * 1024);
    for (;;) {
      const prefix = new Uint8Array(prefixBytes);
      const { bytesRead } = await file.read(prefix, 0, prefixBytes, 0);
      try {
        return { header: parseGgufHeader(prefix.subarray(0, bytesRead)), fileBytes: size };
      } catch (error) {
        if (!(error instanceof OutOfBytes)) throw error;
        if (bytesRead < prefixBytes || prefixBytes >= size || prefixBytes >= MAX_HEADER_BYTES) {
          throw new EmbeddedModelError('truncated', `The model file ${path} ends inside its header (${size} bytes). It is incomplete: download or convert it again.`);
        }
        prefixBytes = Math.min(size, prefixBytes * 4, MAX_HEADER_BYTES);
      }
    }
  } catch (error) {
    if (error instanceof EmbeddedModelError) throw error;
    throw new EmbeddedModelError('unreadable', `The model file ${path} could not be read (${(error as Error).message}).`);
  } finally {
    await file.close();
  }
}

/**
 * The checks that keep llama.cpp from aborting, plus the ones that make its errors readable:
 * required hyperparameters present with sane values, a usable tokenizer, and every tensor's data
 * inside the file. Applies to any architecture `arch` through the `${arch}.*` keys; llama gets
 * its shape checks too.
 */
export function validateGgufModel(header: GgufHeader, fileBytes: number): GgufModelSummary {
  const meta = new MetadataView(header.metadata);
  const architecture = meta.string('general.architecture');
  const contextLength = meta.positiveInt(`${architecture}.context_length`);
  const embeddingLength = meta.positiveInt(`${architecture}.embedding_length`);
  const blockCount = meta.positiveInt(`${architecture}.block_count`);
  if (RECURRENT_ARCHITECTURES.has(architecture)) {
    // No attention heads or feed-forward width to check; llama.cpp validates the state sizes.
    return summarise(header, fileBytes, meta, architecture, contextLength, embeddingLength);
  }
  meta.countPerBlock(`${architecture}.feed_forward_length`, blockCount);
  const headCounts = meta.countPerBlock(`${architecture}.attention.head_count`, blockCount);
  const headCountsKv = meta.has(`${architecture}.attention.head_count_kv`)
    ? meta.countPerBlock(`${architecture}.attention.head_count_kv`, blockCount)
    : headCounts;

  if (architecture === 'llama') {
    const epsilon = meta.number('llama.attention.layer_norm_rms_epsilon');
    if (!(epsilon > 0 && epsilon < 1)) throw invalid('llama.attention.layer_norm_rms_epsilon', `is ${epsilon}`);
    headCounts.forEach((heads, block) => {
      if (heads === 0) throw invalid('llama.attention.head_count', 'is 0 for a block');
      if (embeddingLength % heads !== 0) throw invalid('llama.attention.head_count', `(${heads}) does not divide llama.embedding_length (${embeddingLength})`);
      const kv = headCountsKv[block]!;
      if (kv === 0 || heads % kv !== 0) throw invalid('llama.attention.head_count_kv', `(${kv}) does not divide head_count (${heads})`);
    });
    if (meta.has('llama.rope.dimension_count')) {
      const ropeDims = meta.positiveInt('llama.rope.dimension_count');
      if (ropeDims > embeddingLength / headCounts[0]!) throw invalid('llama.rope.dimension_count', `(${ropeDims}) exceeds the head size`);
    }
  }

  return summarise(header, fileBytes, meta, architecture, contextLength, embeddingLength);
}

/** Architectures without attention (state-space and RWKV models): no heads, no feed-forward width. */
const RECURRENT_ARCHITECTURES = new Set(['mamba', 'mamba2', 'rwkv6', 'rwkv6qwen2', 'rwkv7', 'arwkv7']);

/** The checks every architecture shares: tokenizer, special tokens, tensor data inside the file. */
function summarise(header: GgufHeader, fileBytes: number, meta: MetadataView, architecture: string, contextLength: number, embeddingLength: number): GgufModelSummary {
  const tokenizerModel = meta.string('tokenizer.ggml.model');
  const tokens = meta.array('tokenizer.ggml.tokens', 'string');
  if (tokens.length === 0) throw invalid('tokenizer.ggml.tokens', 'is empty');
  if (tokenizerModel === 'gpt2') meta.array('tokenizer.ggml.merges', 'string');
  if (meta.has('tokenizer.ggml.token_type')) {
    const types = meta.array('tokenizer.ggml.token_type', 'number');
    if (types.length !== tokens.length) throw invalid('tokenizer.ggml.token_type', `has ${types.length} entries for ${tokens.length} tokens`);
  }
  for (const key of header.metadata.keys()) {
    if (!key.startsWith('tokenizer.ggml.') || !key.endsWith('_token_id')) continue;
    const id = meta.number(key);
    // Some converters write -1 (as int32) or UINT32_MAX for "none"; llama.cpp treats both as absent.
    if (id === -1 || id === 0xffffffff) continue;
    if (!Number.isInteger(id) || id < 0 || id >= tokens.length) throw invalid(key, `(${id}) is not a token of the ${tokens.length}-token vocabulary`);
  }

  validateTensors(header, fileBytes, architecture, embeddingLength, tokens.length);
  const fimIds = ['tokenizer.ggml.fim_pre_token_id', 'tokenizer.ggml.fim_suf_token_id', 'tokenizer.ggml.fim_mid_token_id'];
  const hasFimToken = (key: string) => meta.has(key) && meta.number(key) >= 0 && meta.number(key) < tokens.length;
  return { architecture, contextLength, vocabularySize: tokens.length, canInfill: fimIds.every(hasFimToken) };
}

/** Block size (values) and bytes per block of the ggml types whose layout is fixed and known. */
const GGML_TYPE_SIZES: Record<number, [number, number]> = {
  0: [1, 4], 1: [1, 2], 2: [32, 18], 3: [32, 20], 6: [32, 22], 7: [32, 24], 8: [32, 34], 9: [32, 36],
  10: [256, 84], 11: [256, 110], 12: [256, 144], 13: [256, 176], 14: [256, 210], 15: [256, 292],
  24: [1, 1], 25: [1, 2], 26: [1, 4], 27: [1, 8], 28: [1, 8], 30: [1, 2],
};

function validateTensors(header: GgufHeader, fileBytes: number, architecture: string, embeddingLength: number, vocabularySize: number): void {
  if (header.tensors.length === 0) {
    throw new EmbeddedModelError('corrupt', 'The model file holds no tensors (it may be a vocabulary-only GGUF). Point Flint at a full model.');
  }
  const dataBytes = fileBytes - header.dataOffset;
  for (const tensor of header.tensors) {
    if (tensor.dims.some((d) => d <= 0)) throw corrupt(`tensor ${tensor.name} has an empty dimension [${tensor.dims}]`);
    if (tensor.offset % header.alignment !== 0) throw corrupt(`tensor ${tensor.name} is not aligned to ${header.alignment} bytes`);
    const size = GGML_TYPE_SIZES[tensor.ggmlType];
    const elements = tensor.dims.reduce((a, b) => a * b, 1);
    // Types missing from the table (newer quantisations) still get the start-offset check.
    const bytes = size ? Math.ceil(elements / size[0]) * size[1] : 1;
    if (tensor.offset + bytes > dataBytes) {
      throw new EmbeddedModelError('truncated', `The model file ends before the data of tensor ${tensor.name} (${fileBytes} bytes). It is incomplete: download or convert it again.`);
    }
  }
  if (architecture === 'llama') {
    const embeddings = header.tensors.find((t) => t.name === 'token_embd.weight');
    if (!embeddings) throw corrupt('the tensor token_embd.weight is missing');
    const [width, rows] = embeddings.dims;
    if (width !== embeddingLength || rows !== vocabularySize) {
      throw corrupt(`token_embd.weight is [${embeddings.dims}], the metadata says [${embeddingLength}, ${vocabularySize}]`);
    }
  }
}

/** Typed access to metadata that throws `missing_metadata` / `invalid_metadata` sentences. */
class MetadataView {
  constructor(private readonly entries: Map<string, GgufMetadataEntry>) {}

  has(key: string): boolean {
    return this.entries.has(key);
  }

  private get(key: string): GgufMetadataEntry {
    const entry = this.entries.get(key);
    if (!entry) {
      throw new EmbeddedModelError('missing_metadata', `The model file lacks the metadata key ${key}, which llama.cpp needs to load it. Re-export the model with that key.`);
    }
    return entry;
  }

  string(key: string): string {
    const { value } = this.get(key);
    if (typeof value !== 'string' || value === '') throw invalid(key, 'is not a non-empty string');
    return value;
  }

  number(key: string): number {
    const { value } = this.get(key);
    if (typeof value !== 'number') throw invalid(key, 'is not a number');
    return value;
  }

  positiveInt(key: string): number {
    const value = this.number(key);
    if (!Number.isInteger(value) || value <= 0) throw invalid(key, `is ${value}, not a positive integer`);
    return value;
  }

  /**
   * A size llama.cpp accepts once for all blocks (then positive) or one per block (then some may
   * be 0: hybrid models have blocks without attention or feed-forward).
   */
  countPerBlock(key: string, blockCount: number): number[] {
    const { value } = this.get(key);
    if (!Array.isArray(value)) return new Array<number>(blockCount).fill(this.positiveInt(key));
    const counts = value.filter((v): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0);
    if (value.length !== blockCount || counts.length !== blockCount || counts.every((v) => v === 0)) {
      throw invalid(key, `must hold ${blockCount} non-negative integers, not all 0`);
    }
    return counts;
  }

  array(key: string, item: 'string' | 'number'): readonly GgufScalar[] {
    const { value } = this.get(key);
    if (!Array.isArray(value) || !value.every((v) => typeof v === item)) throw invalid(key, `is not an array of ${item}s`);
    return value;
  }
}

function invalid(key: string, problem: string): EmbeddedModelError {
  return new EmbeddedModelError('invalid_metadata', `The model file's metadata key ${key} ${problem}. Re-export the model with correct metadata.`);
}

function corrupt(problem: string): EmbeddedModelError {
  return new EmbeddedModelError('corrupt', `The model file is damaged: ${problem}. Download or convert it again.`);
}

function narrow(value: bigint): number | bigint {
  return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(value) : value;
}

/** Reads and validates in one step: what the provider runs before starting a model host. */
export async function inspectModelFile(path: string): Promise<GgufModelSummary> {
  const { header, fileBytes } = await readGgufHeader(path);
  return validateGgufModel(header, fileBytes);
}
