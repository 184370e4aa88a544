import { seededRandom } from '../seededRandom';
import { gguf, writeGguf, type GgufTensor, type GgufValue } from './writeGguf';

/**
 * A tiny random-weight llama model as GGUF bytes: it loads in llama.cpp in milliseconds and
 * generates gibberish, which is all a test of the loading, streaming and cancelling code needs.
 */
export interface TinyLlamaOptions {
  /** Weights are a pure function of the seed. */
  seed?: number;
  embeddingLength?: number;
  blockCount?: number;
  headCount?: number;
  /** Fewer than `headCount` gives grouped-query attention. */
  headCountKv?: number;
  feedForwardLength?: number;
  contextLength?: number;
  tensorType?: 'f32' | 'f16';
  /** Metadata keys to leave out, to build files llama.cpp must refuse. */
  omitMetadata?: readonly string[];
  /** Metadata to set or replace after the defaults, e.g. a value of the wrong type. */
  overrideMetadata?: Readonly<Record<string, GgufValue>>;
}

/** The special tokens after the byte tokens and merges, in id order. */
export const TINY_LLAMA_SPECIAL_TOKENS = ['<bos>', '<eos>', '<fim_prefix>', '<fim_suffix>', '<fim_middle>'] as const;

/** A short merge list: gpt2 BPE needs one, and each merge result must be in the vocabulary. */
const MERGES = ['Ġ t', 'e r', 'i n', 'Ġ a', 'o n', 'r e'];

// llama.cpp token types (llama_token_type).
const TOKEN_TYPE_NORMAL = 1;
const TOKEN_TYPE_CONTROL = 3;

/**
 * GPT-2's byte-to-unicode table: byte-level BPE vocabularies spell byte b as this character,
 * so that every byte is a printable, non-space code point.
 */
export function gpt2ByteToUnicode(): string[] {
  const printable = (b: number) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  const table: string[] = [];
  let shifted = 0;
  for (let b = 0; b < 256; b++) table.push(String.fromCodePoint(printable(b) ? b : 256 + shifted++));
  return table;
}

/** The vocabulary: 256 byte tokens (id = byte value), the merged tokens, then the specials. */
export function tinyLlamaVocabulary(): { tokens: string[]; tokenTypes: number[]; specialIds: Record<(typeof TINY_LLAMA_SPECIAL_TOKENS)[number], number> } {
  const tokens = [...gpt2ByteToUnicode(), ...MERGES.map((merge) => merge.replace(' ', ''))];
  const tokenTypes: number[] = tokens.map(() => TOKEN_TYPE_NORMAL);
  const specialIds = {} as Record<(typeof TINY_LLAMA_SPECIAL_TOKENS)[number], number>;
  for (const special of TINY_LLAMA_SPECIAL_TOKENS) {
    specialIds[special] = tokens.length;
    tokens.push(special);
    tokenTypes.push(TOKEN_TYPE_CONTROL);
  }
  return { tokens, tokenTypes, specialIds };
}

export function makeTinyLlamaGguf(options: TinyLlamaOptions = {}): Uint8Array {
  const {
    seed = 1,
    embeddingLength: nEmbd = 32,
    blockCount = 1,
    headCount = 2,
    headCountKv = headCount,
    feedForwardLength: nFf = 64,
    contextLength = 256,
    tensorType = 'f32',
    omitMetadata = [],
    overrideMetadata = {},
  } = options;
  if (nEmbd % headCount !== 0 || headCount % headCountKv !== 0) {
    throw new Error('embeddingLength must divide by headCount, and headCount by headCountKv');
  }
  const headDim = nEmbd / headCount;
  const nEmbdKv = headDim * headCountKv;
  const { tokens, tokenTypes, specialIds } = tinyLlamaVocabulary();
  const nVocab = tokens.length;

  const metadata: Record<string, GgufValue> = {
    'general.architecture': gguf.str('llama'),
    'general.name': gguf.str('flint-tiny-test'),
    'general.alignment': gguf.u32(32),
    'llama.context_length': gguf.u32(contextLength),
    'llama.embedding_length': gguf.u32(nEmbd),
    'llama.block_count': gguf.u32(blockCount),
    'llama.feed_forward_length': gguf.u32(nFf),
    'llama.attention.head_count': gguf.u32(headCount),
    'llama.attention.head_count_kv': gguf.u32(headCountKv),
    'llama.attention.layer_norm_rms_epsilon': gguf.f32(1e-5),
    'llama.rope.dimension_count': gguf.u32(headDim),
    'llama.rope.freq_base': gguf.f32(10000),
    'llama.vocab_size': gguf.u32(nVocab),
    'tokenizer.ggml.model': gguf.str('gpt2'),
    'tokenizer.ggml.pre': gguf.str('gpt-2'),
    'tokenizer.ggml.tokens': gguf.strs(tokens),
    'tokenizer.ggml.token_type': gguf.i32s(tokenTypes),
    'tokenizer.ggml.merges': gguf.strs(MERGES),
    'tokenizer.ggml.bos_token_id': gguf.u32(specialIds['<bos>']),
    'tokenizer.ggml.eos_token_id': gguf.u32(specialIds['<eos>']),
    'tokenizer.ggml.add_bos_token': gguf.bool(true),
    'tokenizer.ggml.add_eos_token': gguf.bool(false),
    'tokenizer.ggml.fim_pre_token_id': gguf.u32(specialIds['<fim_prefix>']),
    'tokenizer.ggml.fim_suf_token_id': gguf.u32(specialIds['<fim_suffix>']),
    'tokenizer.ggml.fim_mid_token_id': gguf.u32(specialIds['<fim_middle>']),
  };
  Object.assign(metadata, overrideMetadata);
  for (const key of omitMetadata) delete metadata[key];

  const random = seededRandom(seed);
  /** Uniform in ±1/√fanIn: activations stay O(1) through the blocks. */
  const weight = (name: string, fanIn: number, fanOut: number): GgufTensor => {
    const data = new Float32Array(fanIn * fanOut);
    const scale = 1 / Math.sqrt(fanIn);
    for (let i = 0; i < data.length; i++) data[i] = (random() * 2 - 1) * scale;
    return { name, dims: [fanIn, fanOut], type: tensorType, data };
  };
  // Norm weights stay f32, as llama.cpp's converters write them.
  const norm = (name: string): GgufTensor => ({ name, dims: [nEmbd], type: 'f32', data: new Float32Array(nEmbd).fill(1) });

  const output = weight('output.weight', nEmbd, nVocab);
  // Zero logits for special tokens and for bytes above 0x7f: greedy decoding then never picks
  // <eos>, a FIM token or half a UTF-8 character, so every generated token is text and a
  // generation runs to exactly maxTokens — what deterministic tests need.
  const silenced = [...Array.from({ length: 128 }, (_, i) => 128 + i), ...Object.values(specialIds)];
  for (const id of silenced) output.data.fill(0, id * nEmbd, (id + 1) * nEmbd);

  const tensors: GgufTensor[] = [weight('token_embd.weight', nEmbd, nVocab), norm('output_norm.weight'), output];
  for (let block = 0; block < blockCount; block++) {
    const blk = `blk.${block}`;
    tensors.push(
      norm(`${blk}.attn_norm.weight`),
      weight(`${blk}.attn_q.weight`, nEmbd, nEmbd),
      weight(`${blk}.attn_k.weight`, nEmbd, nEmbdKv),
      weight(`${blk}.attn_v.weight`, nEmbd, nEmbdKv),
      weight(`${blk}.attn_output.weight`, nEmbd, nEmbd),
      norm(`${blk}.ffn_norm.weight`),
      weight(`${blk}.ffn_gate.weight`, nEmbd, nFf),
      weight(`${blk}.ffn_up.weight`, nEmbd, nFf),
      weight(`${blk}.ffn_down.weight`, nFf, nEmbd),
    );
  }
  return writeGguf({ metadata, tensors });
}

export type BrokenGgufKind =
  /** Valid GGUF, but llama.cpp aborts the process on it (EMBEDDED-MODEL-FACTS). */
  | 'missing_feed_forward_length'
  | 'missing_head_count'
  /** Cut in the middle of the tensor data: the header still parses. */
  | 'truncated'
  /** Not a GGUF at all. */
  | 'not_gguf';

/** Files a model loader must refuse with a clear error, never a crash. */
export function makeBrokenGguf(kind: BrokenGgufKind): Uint8Array {
  switch (kind) {
    case 'missing_feed_forward_length':
      return makeTinyLlamaGguf({ omitMetadata: ['llama.feed_forward_length'] });
    case 'missing_head_count':
      return makeTinyLlamaGguf({ omitMetadata: ['llama.attention.head_count'] });
    case 'truncated': {
      const whole = makeTinyLlamaGguf();
      return whole.slice(0, Math.floor(whole.length * 0.8));
    }
    case 'not_gguf':
      return new TextEncoder().encode('<!doctype html><title>404 Not Found</title>\n'.repeat(8));
    default: {
      const unknown: never = kind;
      throw new Error(`unknown broken kind ${String(unknown)}`);
    }
  }
}
