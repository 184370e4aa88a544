"""Training examples: plain continuation windows and fill-in-the-middle (PSM) examples.

PSM layout, exactly what the gateway's model host sends (no BOS: the GGUF sets add_bos_token false):
    <fim_prefix> prefix <fim_suffix> suffix <fim_middle> middle <eos>
Prefix, suffix and middle are tokenized separately, as llama.cpp tokenizes them at inference.
When too long, the prefix loses its start and the suffix its end (the host trims the same way).
"""
import json
import os
import random

import numpy as np


def load_docs(corpus_dir, split):
    with open(os.path.join(corpus_dir, f'{split}.jsonl'), encoding='utf-8') as f:
        return [json.loads(l)['text'] for l in f]


def token_stream(tok, docs):
    """All documents tokenized, each followed by <eos>, as one uint16 array."""
    eos = tok.sid('<eos>')
    parts = []
    for d in docs:
        parts.extend(tok.encode(d))
        parts.append(eos)
    return np.array(parts, dtype=np.uint16)


def psm(tok, prefix_ids, suffix_ids, middle_ids, length, with_eos=True):
    """PSM sequence of at most `length` tokens, trimming the prefix's start and the suffix's end."""
    S = tok.sid
    middle_ids = list(middle_ids) + ([S('<eos>')] if with_eos else [])
    room = length - 3 - len(middle_ids)
    if room < 0:
        middle_ids = middle_ids[:length - 3]
        room = 0
    suf_keep = min(len(suffix_ids), room // 4)
    pre_keep = min(len(prefix_ids), room - suf_keep)
    suf_keep = min(len(suffix_ids), room - pre_keep)
    pre = prefix_ids[len(prefix_ids) - pre_keep:]
    return [S('<fim_prefix>')] + list(pre) + [S('<fim_suffix>')] + list(suffix_ids[:suf_keep]) + [S('<fim_middle>')] + middle_ids


def split_fim(text, rng):
    """Cuts a text window into (prefix, middle, suffix) the way editors ask for completions."""
    r = rng.random()
    lines = text.split('\n')
    if r < 0.5 and len(lines) > 2:
        # One line, or the rest of one line (cursor inside it): the common autocomplete case.
        i = rng.randrange(1, len(lines) - 1)
        start = sum(len(l) + 1 for l in lines[:i])
        line = lines[i]
        cut = 0
        if rng.random() < 0.5 and len(line) > 1:
            cut = rng.randrange(0, len(line))
        a, b = start + cut, start + len(line)
    elif r < 0.7 and len(lines) > 3:
        # A few whole lines (a block): the middle ends before the newline of its last line.
        i = rng.randrange(1, len(lines) - 2)
        k = rng.randint(2, 6)
        start = sum(len(l) + 1 for l in lines[:i])
        end = start + sum(len(l) + 1 for l in lines[i:i + k]) - 1
        a, b = start, min(end, len(text))
    else:
        # A random character span, any boundaries.
        n = len(text)
        span = min(n, int(rng.expovariate(1 / 60)) + 1)
        a = rng.randrange(0, max(1, n - span + 1))
        b = a + span
    return text[:a], text[a:b], text[b:]


class Sampler:
    def __init__(self, tok, docs, stream, context, fim_rate=0.5, seed=0, fim_pack=False):
        self.tok, self.docs, self.stream, self.T = tok, docs, stream, context
        self.fim_rate = fim_rate
        # Packed FIM: several short FIM examples per sequence (each ends with <eos>), many more
        # middles per token trained than one example per 512-token sequence.
        self.fim_pack = fim_pack
        self.rng = random.Random(seed)
        lens = np.array([len(d) for d in docs], dtype=np.float64)
        self.cum = np.cumsum(lens) / lens.sum()
        self.pad = tok.sid('<pad>')

    def _doc(self):
        return self.docs[int(np.searchsorted(self.cum, self.rng.random()))]

    def fim_example(self, width=None):
        doc = self._doc()
        width = width or int(self.T * 2.6)
        # Start the window at a line start, like a file region.
        s = self.rng.randrange(0, max(1, len(doc) - width // 2))
        if s:
            nl = doc.find('\n', s)
            s = nl + 1 if nl != -1 else 0
        window = doc[s:s + width]
        if self.rng.random() < 0.1:
            window = doc[s:]  # sometimes the real end of the file: empty or short suffix
            window = window[:width]
        pre, mid, suf = split_fim(window, self.rng)
        tk = self.tok.encode
        return psm(self.tok, tk(pre), tk(suf), tk(mid)[:self.T // 4], self.T + 1)

    def packed_fim(self):
        seq = []
        while len(seq) < self.T + 1:
            seq += self.fim_example(width=self.rng.randint(100, 600))
        return seq[:self.T + 1]

    def plain_example(self):
        i = self.rng.randrange(0, len(self.stream) - self.T - 1)
        return self.stream[i:i + self.T + 1].tolist()

    def batch(self, n):
        """(inputs, targets) int64 arrays of shape (n, T); padded targets are -100 (ignored)."""
        x = np.full((n, self.T), self.pad, dtype=np.int64)
        y = np.full((n, self.T), -100, dtype=np.int64)
        for r in range(n):
            if self.rng.random() < self.fim_rate:
                seq = self.packed_fim() if self.fim_pack else self.fim_example()
            else:
                seq = self.plain_example()
            seq = seq[:self.T + 1]
            L = len(seq) - 1
            x[r, :L] = seq[:-1]
            y[r, :L] = seq[1:]
        return x, y
