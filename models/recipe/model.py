"""A small llama-architecture decoder that llama.cpp runs as-is (general.architecture = llama).

RMSNorm (eps in the config), RoPE on adjacent pairs (x[2i], x[2i+1]) as llama.cpp's LLAMA_ROPE_TYPE_NORM
does, so Q/K weights are exported without permutation; SwiGLU feed-forward; no biases; tied
input/output embeddings (GGUF has no output.weight, llama.cpp then reuses token_embd).
"""
from dataclasses import asdict, dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    vocab_size: int = 1024
    dim: int = 128
    n_layers: int = 4
    n_heads: int = 4
    n_kv_heads: int = 4
    ffn_dim: int = 352
    context: int = 512
    norm_eps: float = 1e-5
    rope_base: float = 10000.0

    def to_dict(self):
        return asdict(self)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(head_dim, length, base):
    inv = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    ang = torch.arange(length, dtype=torch.float64)[:, None] * inv[None, :]
    return ang.cos().float(), ang.sin().float()


def apply_rope(x, cos, sin):
    """x: (B, H, T, D). Rotates adjacent pairs (x0, x1), (x2, x3), ... like llama.cpp's llama rope."""
    T = x.shape[-2]
    c, s = cos[:T], sin[:T]
    x0, x1 = x[..., 0::2], x[..., 1::2]
    r0 = x0 * c - x1 * s
    r1 = x0 * s + x1 * c
    return torch.stack((r0, r1), dim=-1).flatten(-2)


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        hd = cfg.dim // cfg.n_heads
        self.attn_norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.wq = nn.Linear(cfg.dim, cfg.n_heads * hd, bias=False)
        self.wk = nn.Linear(cfg.dim, cfg.n_kv_heads * hd, bias=False)
        self.wv = nn.Linear(cfg.dim, cfg.n_kv_heads * hd, bias=False)
        self.wo = nn.Linear(cfg.n_heads * hd, cfg.dim, bias=False)
        self.ffn_norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.w_gate = nn.Linear(cfg.dim, cfg.ffn_dim, bias=False)
        self.w_up = nn.Linear(cfg.dim, cfg.ffn_dim, bias=False)
        self.w_down = nn.Linear(cfg.ffn_dim, cfg.dim, bias=False)

    _masks = {}

    @classmethod
    def causal_mask(cls, T, device):
        m = cls._masks.get((T, device))
        if m is None:
            m = cls._masks[(T, device)] = torch.ones(T, T, dtype=torch.bool, device=device).triu(1)
        return m

    def forward(self, x, cos, sin):
        B, T, _ = x.shape
        cfg = self.cfg
        hd = cfg.dim // cfg.n_heads
        h = self.attn_norm(x)
        q = self.wq(h).view(B, T, cfg.n_heads, hd).transpose(1, 2)
        k = self.wk(h).view(B, T, cfg.n_kv_heads, hd).transpose(1, 2)
        v = self.wv(h).view(B, T, cfg.n_kv_heads, hd).transpose(1, 2)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        if cfg.n_kv_heads != cfg.n_heads:
            rep = cfg.n_heads // cfg.n_kv_heads
            k = k.repeat_interleave(rep, dim=1)
            v = v.repeat_interleave(rep, dim=1)
        att = (q @ k.transpose(-2, -1)) * (hd ** -0.5)
        att = att.masked_fill(self.causal_mask(T, x.device), float('-inf'))
        a = att.softmax(-1) @ v
        x = x + self.wo(a.transpose(1, 2).reshape(B, T, -1))
        h = self.ffn_norm(x)
        return x + self.w_down(F.silu(self.w_gate(h)) * self.w_up(h))


class Model(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.dim)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.norm = RMSNorm(cfg.dim, cfg.norm_eps)
        cos, sin = rope_tables(cfg.dim // cfg.n_heads, cfg.context, cfg.rope_base)
        self.register_buffer('cos', cos, persistent=False)
        self.register_buffer('sin', sin, persistent=False)
        self.apply(self._init)
        for b in self.blocks:  # GPT-2 style scaled init of residual projections
            nn.init.normal_(b.wo.weight, std=0.02 / (2 * cfg.n_layers) ** 0.5)
            nn.init.normal_(b.w_down.weight, std=0.02 / (2 * cfg.n_layers) ** 0.5)

    @staticmethod
    def _init(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)

    def n_params(self):
        return sum(p.numel() for p in self.parameters())

    def forward(self, idx):
        x = self.tok_emb(idx)
        for b in self.blocks:
            x = b(x, self.cos, self.sin)
        return F.linear(self.norm(x), self.tok_emb.weight)  # tied output

    @torch.no_grad()
    def step(self, ids, cache):
        """Incremental forward: logits for `ids` (1-D list) given the KV cache (list per block), which grows."""
        cfg = self.cfg
        hd = cfg.dim // cfg.n_heads
        past = cache[0][0].shape[2] if cache else 0
        T = len(ids)
        x = self.tok_emb(torch.tensor([ids]))
        cos, sin = self.cos[past:past + T], self.sin[past:past + T]
        for i, b in enumerate(self.blocks):
            h = b.attn_norm(x)
            q = apply_rope(b.wq(h).view(1, T, cfg.n_heads, hd).transpose(1, 2), cos, sin)
            k = apply_rope(b.wk(h).view(1, T, cfg.n_kv_heads, hd).transpose(1, 2), cos, sin)
            v = b.wv(h).view(1, T, cfg.n_kv_heads, hd).transpose(1, 2)
            if len(cache) > i:
                k = torch.cat([cache[i][0], k], 2)
                v = torch.cat([cache[i][1], v], 2)
                cache[i] = (k, v)
            else:
                cache.append((k, v))
            rep = cfg.n_heads // cfg.n_kv_heads
            kk, vv = (k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)) if rep > 1 else (k, v)
            att = (q @ kk.transpose(-2, -1)) * (hd ** -0.5)
            S = past + T
            mask = torch.ones(T, S, dtype=torch.bool).triu(past + 1)
            att = att.masked_fill(mask, float('-inf'))
            x = x + b.wo((att.softmax(-1) @ vv).transpose(1, 2).reshape(1, T, -1))
            h = b.ffn_norm(x)
            x = x + b.w_down(F.silu(b.w_gate(h)) * b.w_up(h))
        return F.linear(self.norm(x), self.tok_emb.weight)[0]

    @torch.no_grad()
    def greedy_cached(self, ids, n, stop=lambda t: False):
        """Greedy continuation with a KV cache; stops after a token for which stop(token) is true."""
        cache, out = [], []
        logits = self.step(list(ids), cache)
        for _ in range(n):
            if len(ids) + len(out) >= self.cfg.context:
                break
            t = int(logits[-1].argmax())
            out.append(t)
            if stop(t):
                break
            logits = self.step([t], cache)
        return out

    @torch.no_grad()
    def greedy(self, ids, n, stop_ids=()):
        """Greedy continuation of a list of ids (full recompute per token: fine for tiny models)."""
        out = list(ids)
        for _ in range(n):
            ctx = out[-self.cfg.context:]
            nxt = int(self(torch.tensor([ctx]))[0, -1].argmax())
            out.append(nxt)
            if nxt in stop_ids:
                break
        return out[len(ids):]
