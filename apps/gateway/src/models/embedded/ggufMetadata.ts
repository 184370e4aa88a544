/**
 * Refuses, before llama.cpp sees it, a GGUF file that would make llama.cpp abort the process, and
 * a file that is cut short. Everything else wrong with a file llama.cpp reports itself, as an error
 * the model host turns into `load_failed`; ggufMetadata.test.ts runs both kinds through the host.
 *
 * The header is walked here rather than with node-llama-cpp's `readGgufFileInfo`, because that
 * reader trusts every count and length in the file: it reads a cut file's missing bytes as zeros,
 * blocks the event loop on a damaged tensor count, and aborts Node inside `fs.read` on a damaged
 * string length (3.22.1). Here every read is bounded by the bytes the file has. The model host
 * reads the file again with node-llama-cpp, out of process, once it has passed.
 */
import { open } from 'node:fs/promises';
import { EmbeddedModelError } from './EmbeddedModelError';

export type GgufScalar = number | bigint | boolean | string;
export type GgufMetadataValue = GgufScalar | readonly GgufScalar[];

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
  metadata: Map<string, GgufMetadataValue>;
  tensors: GgufTensorInfo[];
  /** Absolute file offset where tensor data starts. */
  dataOffset: number;
}

const TYPE_NAMES = ['uint8', 'int8', 'uint16', 'int16', 'uint32', 'int32', 'float32', 'bool', 'string', 'array', 'uint64', 'int64', 'float64'] as const;
type GgufTypeName = (typeof TYPE_NAMES)[number];

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

  const metadata = new Map<string, GgufMetadataValue>();
  for (let i = 0; i < metadataCount; i++) {
    const key = string();
    const type = typeName(u32(), key);
    if (type !== 'array') {
      metadata.set(key, scalar(type));
      continue;
    }
    const itemType = typeName(u32(), key);
    const count = u64();
    need(count); // every item is at least one byte: refuse absurd counts before allocating
    const items: GgufScalar[] = [];
    for (let j = 0; j < count; j++) items.push(scalar(itemType));
    metadata.set(key, items);
  }

  // Where the tensor data starts depends on it, and so does the check that the file is whole.
  const alignment = metadata.get('general.alignment') ?? 32;
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
  return { version, metadata, tensors, dataOffset: Math.ceil(at / alignment) * alignment };
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
 * llama.cpp sizes tensors from these keys and asserts each size is at least 1
 * (`GGML_ASSERT(t_meta.ne[dim] >= 1)` in its model loader): missing or 0, the process aborts.
 * `head_count_kv` defaults to `head_count` when absent.
 */
const TENSOR_SIZES = [
  { key: 'feed_forward_length', required: true },
  { key: 'attention.head_count', required: true },
  { key: 'attention.head_count_kv', required: false },
];

/** Architectures without attention (state-space and RWKV models): no heads, no feed-forward width. */
const RECURRENT_ARCHITECTURES = new Set(['mamba', 'mamba2', 'rwkv6', 'rwkv6qwen2', 'rwkv7', 'arwkv7']);

/**
 * Throws for a file llama.cpp would abort on, or whose tensor data the file does not hold.
 * A missing architecture, a wrong type, a shape that disagrees with the tensors: llama.cpp
 * refuses those itself, with a reason the model host passes on.
 */
export function validateGgufModel(header: GgufHeader, fileBytes: number): void {
  const { metadata } = header;
  const architecture = metadata.get('general.architecture');
  if (typeof architecture === 'string' && !RECURRENT_ARCHITECTURES.has(architecture)) {
    for (const { key, required } of TENSOR_SIZES) checkTensorSize(metadata, `${architecture}.${key}`, required);
  }
  const tokens = metadata.get('tokenizer.ggml.tokens');
  // The vocabulary size is the embedding table's height: an empty one aborts like a 0 above.
  if (Array.isArray(tokens) && tokens.length === 0) throw invalid('tokenizer.ggml.tokens', 'is empty');
  checkTensorData(header, fileBytes);
}

/**
 * One size for every block (then positive) or one per block (then some may be 0: hybrid models
 * have blocks without attention or feed-forward).
 */
function checkTensorSize(metadata: Map<string, GgufMetadataValue>, key: string, required: boolean): void {
  const value = metadata.get(key);
  if (value === undefined) {
    if (!required) return;
    throw new EmbeddedModelError('missing_metadata', `The model file lacks the metadata key ${key}, which llama.cpp needs to load it. Re-export the model with that key.`);
  }
  const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;
  if (!Array.isArray(value)) {
    if (!isCount(value) || value === 0) throw invalid(key, `is ${String(value)}, not a positive integer`);
  } else if (!value.every(isCount) || !value.some((v) => v !== 0)) {
    throw invalid(key, 'must hold non-negative integers, not all 0');
  }
}

/** Block size (values) and bytes per block of the ggml types whose layout is fixed and known. */
const GGML_TYPE_SIZES: Record<number, [number, number]> = {
  0: [1, 4], 1: [1, 2], 2: [32, 18], 3: [32, 20], 6: [32, 22], 7: [32, 24], 8: [32, 34], 9: [32, 36],
  10: [256, 84], 11: [256, 110], 12: [256, 144], 13: [256, 176], 14: [256, 210], 15: [256, 292],
  24: [1, 1], 25: [1, 2], 26: [1, 4], 27: [1, 8], 28: [1, 8], 30: [1, 2],
};

/** llama.cpp refuses these files too, but a cut download is common enough to deserve its own sentence. */
function checkTensorData(header: GgufHeader, fileBytes: number): void {
  const dataBytes = fileBytes - header.dataOffset;
  for (const tensor of header.tensors) {
    const size = GGML_TYPE_SIZES[tensor.ggmlType];
    const elements = tensor.dims.reduce((a, b) => a * b, 1);
    // Types missing from the table (newer quantisations) still get the start-offset check.
    const bytes = size ? Math.ceil(elements / size[0]) * size[1] : 1;
    if (tensor.offset + bytes > dataBytes) {
      throw new EmbeddedModelError('truncated', `The model file ends before the data of tensor ${tensor.name} (${fileBytes} bytes). It is incomplete: download or convert it again.`);
    }
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

/** Reads and checks in one step: what the provider runs before starting a model host. */
export async function inspectModelFile(path: string): Promise<void> {
  const { header, fileBytes } = await readGgufHeader(path);
  validateGgufModel(header, fileBytes);
}
