/**
 * A small GGUF v3 writer, so tests build the model files they load instead of shipping binaries.
 * Layout (llama.cpp's gguf.h): header, metadata key/values, tensor infos, padding to
 * `general.alignment`, then each tensor's data at an aligned offset. All integers little-endian.
 */

/** A typed metadata value: GGUF stores the type beside every value, so the writer must be told it. */
export type GgufValue =
  | { type: 'uint32'; value: number }
  | { type: 'int32'; value: number }
  | { type: 'uint64'; value: bigint }
  | { type: 'float32'; value: number }
  | { type: 'bool'; value: boolean }
  | { type: 'string'; value: string }
  | { type: 'string[]'; value: readonly string[] }
  | { type: 'int32[]'; value: readonly number[] }
  | { type: 'uint32[]'; value: readonly number[] }
  | { type: 'float32[]'; value: readonly number[] };

/** Shorthands for metadata values: `{ 'llama.block_count': gguf.u32(2) }`. */
export const gguf = {
  u32: (value: number): GgufValue => ({ type: 'uint32', value }),
  i32: (value: number): GgufValue => ({ type: 'int32', value }),
  u64: (value: bigint): GgufValue => ({ type: 'uint64', value }),
  f32: (value: number): GgufValue => ({ type: 'float32', value }),
  bool: (value: boolean): GgufValue => ({ type: 'bool', value }),
  str: (value: string): GgufValue => ({ type: 'string', value }),
  strs: (value: readonly string[]): GgufValue => ({ type: 'string[]', value }),
  i32s: (value: readonly number[]): GgufValue => ({ type: 'int32[]', value }),
  u32s: (value: readonly number[]): GgufValue => ({ type: 'uint32[]', value }),
  f32s: (value: readonly number[]): GgufValue => ({ type: 'float32[]', value }),
};

export interface GgufTensor {
  name: string;
  /** GGUF order: innermost first. A PyTorch (out, in) weight is listed as [in, out]. */
  dims: readonly number[];
  type: 'f32' | 'f16';
  /** Row-major values; `dims` product long. Converted to `type` on write. */
  data: Float32Array;
}

export interface GgufFile {
  metadata: Readonly<Record<string, GgufValue>>;
  tensors: readonly GgufTensor[];
}

/** gguf.h `gguf_type` codes. */
export const GGUF_VALUE_TYPE = {
  uint8: 0, int8: 1, uint16: 2, int16: 3, uint32: 4, int32: 5, float32: 6, bool: 7,
  string: 8, array: 9, uint64: 10, int64: 11, float64: 12,
} as const;

/** ggml.h `ggml_type` codes for the formats this writer emits. */
export const GGML_TYPE = { f32: 0, f16: 1 } as const;

export const GGUF_MAGIC = 0x46554747; // "GGUF" read as a little-endian uint32
const DEFAULT_ALIGNMENT = 32;

/**
 * Serialises a GGUF v3 file. Tensor data is aligned to `general.alignment` (32 unless the
 * metadata says otherwise, and then it must be a uint32 power of two).
 *
 * @example
 * const bytes = writeGguf({
 *   metadata: { 'general.architecture': gguf.str('llama') },
 *   tensors: [{ name: 'output_norm.weight', dims: [4], type: 'f32', data: new Float32Array(4).fill(1) }],
 * });
 */
export function writeGguf(file: GgufFile): Uint8Array {
  const alignment = alignmentOf(file.metadata);
  const out = new ByteWriter();
  out.u32(GGUF_MAGIC);
  out.u32(3);
  out.u64(BigInt(file.tensors.length));
  out.u64(BigInt(Object.keys(file.metadata).length));
  for (const [key, value] of Object.entries(file.metadata)) {
    out.string(key);
    writeValue(out, value);
  }

  let dataOffset = 0;
  const offsets: number[] = [];
  for (const tensor of file.tensors) {
    const elements = tensor.dims.reduce((a, b) => a * b, 1);
    if (elements !== tensor.data.length) {
      throw new Error(`tensor ${tensor.name}: dims [${tensor.dims}] hold ${elements} values, data has ${tensor.data.length}`);
    }
    out.string(tensor.name);
    out.u32(tensor.dims.length);
    for (const dim of tensor.dims) out.u64(BigInt(dim));
    out.u32(GGML_TYPE[tensor.type]);
    out.u64(BigInt(dataOffset));
    offsets.push(dataOffset);
    dataOffset = alignUp(dataOffset + elements * bytesPerValue(tensor.type), alignment);
  }

  out.padTo(alignment);
  const dataStart = out.length;
  for (const [i, tensor] of file.tensors.entries()) {
    out.padTo(alignment, dataStart + offsets[i]!);
    if (tensor.type === 'f32') for (const v of tensor.data) out.f32(v);
    else for (const v of tensor.data) out.u16(float32ToFloat16Bits(v));
  }
  return out.bytes();
}

function alignmentOf(metadata: GgufFile['metadata']): number {
  const value = metadata['general.alignment'];
  if (value === undefined) return DEFAULT_ALIGNMENT;
  if (value.type !== 'uint32' || value.value <= 0 || (value.value & (value.value - 1)) !== 0) {
    throw new Error('general.alignment must be a uint32 power of two');
  }
  return value.value;
}

function writeValue(out: ByteWriter, value: GgufValue): void {
  const arrayOf = (itemType: number, count: number) => {
    out.u32(GGUF_VALUE_TYPE.array);
    out.u32(itemType);
    out.u64(BigInt(count));
  };
  switch (value.type) {
    case 'uint32': out.u32(GGUF_VALUE_TYPE.uint32); out.u32(value.value); return;
    case 'int32': out.u32(GGUF_VALUE_TYPE.int32); out.i32(value.value); return;
    case 'uint64': out.u32(GGUF_VALUE_TYPE.uint64); out.u64(value.value); return;
    case 'float32': out.u32(GGUF_VALUE_TYPE.float32); out.f32(value.value); return;
    case 'bool': out.u32(GGUF_VALUE_TYPE.bool); out.u8(value.value ? 1 : 0); return;
    case 'string': out.u32(GGUF_VALUE_TYPE.string); out.string(value.value); return;
    case 'string[]': arrayOf(GGUF_VALUE_TYPE.string, value.value.length); for (const s of value.value) out.string(s); return;
    case 'int32[]': arrayOf(GGUF_VALUE_TYPE.int32, value.value.length); for (const n of value.value) out.i32(n); return;
    case 'uint32[]': arrayOf(GGUF_VALUE_TYPE.uint32, value.value.length); for (const n of value.value) out.u32(n); return;
    case 'float32[]': arrayOf(GGUF_VALUE_TYPE.float32, value.value.length); for (const n of value.value) out.f32(n); return;
    default: {
      const unknown: never = value;
      throw new Error(`unknown GGUF value ${JSON.stringify(unknown)}`);
    }
  }
}

const bytesPerValue = (type: GgufTensor['type']) => (type === 'f32' ? 4 : 2);
const alignUp = (n: number, alignment: number) => Math.ceil(n / alignment) * alignment;

/** IEEE 754 half precision, round-to-nearest-even; overflow saturates to infinity. */
export function float32ToFloat16Bits(value: number): number {
  const f32 = new Float32Array([value]);
  const bits = new Uint32Array(f32.buffer)[0]!;
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  const mantissa = bits & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa ? 0x200 : 0);
  const halfExponent = exponent - 127 + 15;
  if (halfExponent >= 0x1f) return sign | 0x7c00;
  if (halfExponent <= 0) {
    if (halfExponent < -10) return sign;
    const full = mantissa | 0x800000;
    const shift = 14 - halfExponent;
    let half = full >>> shift;
    const rest = full & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    if (rest > halfway || (rest === halfway && (half & 1))) half++;
    return sign | half;
  }
  let half = (halfExponent << 10) | (mantissa >>> 13);
  const rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (half & 1))) half++; // may carry into the exponent: correct
  return sign | half;
}

/** Growable little-endian buffer. */
class ByteWriter {
  private buffer = new Uint8Array(1024);
  private view = new DataView(this.buffer.buffer);
  length = 0;

  private reserve(n: number): number {
    if (this.length + n > this.buffer.length) {
      const next = new Uint8Array(Math.max(this.buffer.length * 2, this.length + n));
      next.set(this.buffer.subarray(0, this.length));
      this.buffer = next;
      this.view = new DataView(next.buffer);
    }
    const at = this.length;
    this.length += n;
    return at;
  }

  // reserve() may swap the buffer, so it runs before `this.view` is read.
  u8(n: number) { const at = this.reserve(1); this.view.setUint8(at, n); }
  u16(n: number) { const at = this.reserve(2); this.view.setUint16(at, n, true); }
  u32(n: number) { const at = this.reserve(4); this.view.setUint32(at, n, true); }
  i32(n: number) { const at = this.reserve(4); this.view.setInt32(at, n, true); }
  u64(n: bigint) { const at = this.reserve(8); this.view.setBigUint64(at, n, true); }
  f32(n: number) { const at = this.reserve(4); this.view.setFloat32(at, n, true); }

  string(s: string) {
    const encoded = new TextEncoder().encode(s);
    this.u64(BigInt(encoded.length));
    const at = this.reserve(encoded.length);
    this.buffer.set(encoded, at);
  }

  /** Zero-pads up to the next multiple of `alignment`, or up to `target` when given. */
  padTo(alignment: number, target = alignUp(this.length, alignment)) {
    if (target > this.length) this.reserve(target - this.length);
  }

  bytes(): Uint8Array {
    return this.buffer.slice(0, this.length);
  }
}
