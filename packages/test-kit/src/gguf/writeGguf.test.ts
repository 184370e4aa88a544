import { describe, expect, it } from 'vitest';
import { gpt2ByteToUnicode, makeBrokenGguf, makeTinyLlamaGguf, tinyLlamaVocabulary } from './makeTinyLlamaGguf';
import { float32ToFloat16Bits, gguf, GGUF_MAGIC, writeGguf } from './writeGguf';

// The full metadata round trip (writer → the gateway's validating reader, and node-llama-cpp's
// own parser) lives in apps/gateway/src/models/embedded/ggufMetadata.test.ts: packages cannot
// import apps. These tests pin the byte layout.

const view = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);

describe('writeGguf', () => {
  it('writes the v3 header: magic, version, tensor and metadata counts', () => {
    const bytes = writeGguf({
      metadata: { a: gguf.u32(7), b: gguf.str('x') },
      tensors: [{ name: 't', dims: [2], type: 'f32', data: new Float32Array([1, 2]) }],
    });
    const v = view(bytes);
    expect(v.getUint32(0, true)).toBe(GGUF_MAGIC);
    expect(new TextDecoder().decode(bytes.subarray(0, 4))).toBe('GGUF');
    expect(v.getUint32(4, true)).toBe(3);
    expect(v.getBigUint64(8, true)).toBe(1n);
    expect(v.getBigUint64(16, true)).toBe(2n);
    // First key: u64 length, "a", u32 type (uint32 = 4), u32 value.
    expect(v.getBigUint64(24, true)).toBe(1n);
    expect(String.fromCharCode(bytes[32]!)).toBe('a');
    expect(v.getUint32(33, true)).toBe(4);
    expect(v.getUint32(37, true)).toBe(7);
  });

  it('places tensor data at 32-byte aligned offsets after the aligned header', () => {
    const tensors = [
      { name: 'a', dims: [3], type: 'f32' as const, data: new Float32Array([1, 2, 3]) },
      { name: 'b', dims: [5], type: 'f16' as const, data: new Float32Array([1, -2, 0.5, 0, 65504]) },
    ];
    const bytes = writeGguf({ metadata: {}, tensors });
    // a: 12 bytes at 0, b starts at 32 and is 10 bytes long.
    const dataStart = bytes.length - 32 - 10;
    expect(dataStart % 32).toBe(0);
    const v = view(bytes);
    expect([0, 4, 8].map((o) => v.getFloat32(dataStart + o, true))).toEqual([1, 2, 3]);
    expect([0, 2, 4, 6, 8].map((o) => v.getUint16(dataStart + 32 + o, true))).toEqual([0x3c00, 0xc000, 0x3800, 0, 0x7bff]);
  });

  it('refuses a tensor whose data does not match its dims', () => {
    expect(() => writeGguf({ metadata: {}, tensors: [{ name: 't', dims: [2, 2], type: 'f32', data: new Float32Array(3) }] })).toThrow(/hold 4 values/);
  });

  it('converts to half precision with rounding, subnormals and saturation', () => {
    expect(float32ToFloat16Bits(1)).toBe(0x3c00);
    expect(float32ToFloat16Bits(0.1)).toBe(0x2e66);
    expect(float32ToFloat16Bits(-0)).toBe(0x8000);
    expect(float32ToFloat16Bits(2 ** -24)).toBe(0x0001); // smallest subnormal
    expect(float32ToFloat16Bits(1e-9)).toBe(0);
    expect(float32ToFloat16Bits(1e6)).toBe(0x7c00);
    expect(float32ToFloat16Bits(Number.NaN) & 0x7c00).toBe(0x7c00);
  });
});

describe('makeTinyLlamaGguf', () => {
  it('spells the 256 byte tokens with the GPT-2 byte-to-unicode table', () => {
    const table = gpt2ByteToUnicode();
    expect(new Set(table).size).toBe(256);
    expect(table[0x41]).toBe('A');
    expect(table[0x20]).toBe('Ġ'); // space
    expect(table[0x0a]).toBe('Ċ'); // newline
    const { tokens, specialIds } = tinyLlamaVocabulary();
    expect(tokens.slice(0, 256)).toEqual(table);
    expect(tokens[specialIds['<fim_middle>']]).toBe('<fim_middle>');
  });

  it('is a pure function of its options', () => {
    const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b)); // toEqual walks bytes slowly
    expect(same(makeTinyLlamaGguf({ seed: 3 }), makeTinyLlamaGguf({ seed: 3 }))).toBe(true);
    expect(same(makeTinyLlamaGguf({ seed: 3 }), makeTinyLlamaGguf({ seed: 4 }))).toBe(false);
  });

  it('builds broken files of each kind', () => {
    const whole = makeTinyLlamaGguf();
    expect(makeBrokenGguf('truncated').length).toBeLessThan(whole.length);
    expect(view(makeBrokenGguf('not_gguf')).getUint32(0, true)).not.toBe(GGUF_MAGIC);
    const missing = new TextDecoder().decode(makeBrokenGguf('missing_feed_forward_length'));
    expect(missing).not.toContain('llama.feed_forward_length');
    expect(missing).toContain('llama.embedding_length');
  });
});
