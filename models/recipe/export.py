#!/usr/bin/python3
"""Step d: checkpoint -> GGUF that llama.cpp (node-llama-cpp) loads as a llama model with gpt2 BPE."""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bpe  # noqa: E402
import gguf  # noqa: E402
from gguf import F32, I32, U32  # noqa: E402

REQUIRED_KEYS = [
    'general.architecture', 'llama.context_length', 'llama.embedding_length', 'llama.block_count',
    'llama.feed_forward_length', 'llama.attention.head_count', 'llama.attention.head_count_kv',
    'llama.attention.layer_norm_rms_epsilon', 'llama.rope.dimension_count', 'llama.rope.freq_base',
    'tokenizer.ggml.model', 'tokenizer.ggml.pre', 'tokenizer.ggml.tokens', 'tokenizer.ggml.token_type',
    'tokenizer.ggml.merges', 'tokenizer.ggml.bos_token_id', 'tokenizer.ggml.eos_token_id',
    'tokenizer.ggml.fim_pre_token_id', 'tokenizer.ggml.fim_suf_token_id', 'tokenizer.ggml.fim_mid_token_id',
]


def metadata(cfg, tok, name='flint-tiny', file_type=1):
    S = tok.sid
    return {
        'general.architecture': 'llama',
        'general.name': name,
        'general.description': 'Flint demo code completion model (fill-in-the-middle); trained by models/recipe. Not an instruction follower.',
        'general.file_type': U32(file_type),
        'general.quantization_version': U32(2),
        'llama.vocab_size': U32(cfg['vocab_size']),
        'llama.context_length': U32(cfg['context']),
        'llama.embedding_length': U32(cfg['dim']),
        'llama.block_count': U32(cfg['n_layers']),
        'llama.feed_forward_length': U32(cfg['ffn_dim']),
        'llama.attention.head_count': U32(cfg['n_heads']),
        'llama.attention.head_count_kv': U32(cfg['n_kv_heads']),
        'llama.attention.layer_norm_rms_epsilon': F32(cfg['norm_eps']),
        'llama.rope.dimension_count': U32(cfg['dim'] // cfg['n_heads']),
        'llama.rope.freq_base': F32(cfg['rope_base']),
        'tokenizer.ggml.model': 'gpt2',
        'tokenizer.ggml.pre': bpe.PRE_TYPE,
        'tokenizer.ggml.tokens': list(tok.tokens),
        'tokenizer.ggml.token_type': [I32(t) for t in tok.token_types()],
        'tokenizer.ggml.merges': [a + ' ' + b for a, b in tok.merges],
        'tokenizer.ggml.bos_token_id': U32(S('<bos>')),
        'tokenizer.ggml.eos_token_id': U32(S('<eos>')),
        'tokenizer.ggml.eot_token_id': U32(S('<eos>')),
        'tokenizer.ggml.padding_token_id': U32(S('<pad>')),
        'tokenizer.ggml.fim_pre_token_id': U32(S('<fim_prefix>')),
        'tokenizer.ggml.fim_suf_token_id': U32(S('<fim_suffix>')),
        'tokenizer.ggml.fim_mid_token_id': U32(S('<fim_middle>')),
        # The model was trained without BOS: prompts are <fim_prefix>... or raw code.
        'tokenizer.ggml.add_bos_token': False,
        'tokenizer.ggml.add_eos_token': False,
    }


def tensors_from_state(sd, cfg, wtype):
    """GGUF tensors from a model.Model state dict (numpy arrays or torch tensors)."""
    def a(k):
        v = sd[k]
        return v.detach().float().numpy() if hasattr(v, 'detach') else np.asarray(v, dtype=np.float32)
    out = [('token_embd.weight', a('tok_emb.weight'), wtype), ('output_norm.weight', a('norm.weight'), gguf.GGML_F32)]
    names = {'attn_norm': 'attn_norm.weight', 'attn_q': 'wq.weight', 'attn_k': 'wk.weight', 'attn_v': 'wv.weight',
             'attn_output': 'wo.weight', 'ffn_norm': 'ffn_norm.weight', 'ffn_gate': 'w_gate.weight',
             'ffn_up': 'w_up.weight', 'ffn_down': 'w_down.weight'}
    for i in range(cfg['n_layers']):
        for g, t in names.items():
            arr = a(f'blocks.{i}.{t}')
            out.append((f'blk.{i}.{g}.weight', arr, gguf.GGML_F32 if arr.ndim == 1 else wtype))
    return out


def export(ckpt_path, out_path, wtype_name='f16', name='flint-tiny'):
    import torch
    ck = torch.load(ckpt_path, map_location='cpu')
    cfg = ck['config']
    d = ck['tokenizer']
    tok = bpe.Tokenizer([tuple(m.split(' ')) for m in d['merges']], d['specials'])
    wtype = {'f32': gguf.GGML_F32, 'f16': gguf.GGML_F16, 'q8_0': gguf.GGML_Q8_0}[wtype_name]
    file_type = {'f32': 0, 'f16': 1, 'q8_0': 7}[wtype_name]
    meta = metadata(cfg, tok, name, file_type)
    missing = [k for k in REQUIRED_KEYS if k not in meta]
    assert not missing, missing
    gguf.write(out_path, meta, tensors_from_state(ck['model'], cfg, wtype))
    return ck


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--ckpt', default='models/.cache/ckpt.pt')
    ap.add_argument('--out', default='models/flint-tiny.gguf')
    ap.add_argument('--type', default='f16', choices=['f32', 'f16', 'q8_0'])
    args = ap.parse_args()
    ck = export(args.ckpt, args.out, args.type)
    print(f'wrote {args.out} ({os.path.getsize(args.out):,} bytes) from step {ck["step"]}, {ck["tokens"]:,} tokens')


if __name__ == '__main__':
    main()
