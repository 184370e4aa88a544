"""Byte-level BPE, GPT-2 style, exactly as llama.cpp's `gpt2` tokenizer runs it with the GPT-2 pre-tokenizer.

- Bytes map to printable unicode characters with GPT-2's bytes_to_unicode table; the vocabulary and
  merges are stored in that form (what GGUF `tokenizer.ggml.tokens` / `merges` hold).
- Pre-tokenizer: llama.cpp's LLAMA_VOCAB_PRE_TYPE_GPT2 regex, used verbatim below.
- Merges apply by rank within each pre-token, lowest rank first (ties: leftmost), like llama.cpp.
- Special tokens are control tokens: never produced from plain text; only `encode_special` places them.

Needs only the standard library and the `regex` module (Debian python3-regex).
"""
import json
from collections import Counter, defaultdict

import regex

# llama.cpp src/llama-vocab.cpp, case LLAMA_VOCAB_PRE_TYPE_GPT2 (pre "gpt-2") lists
#   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)
# and its hand-written splitter for it (unicode.cpp, unicode_regex_split_custom_gpt2) ends with a
# plain \s+ step, exactly like OpenAI's original GPT-2 pattern below; without that last alternative
# re.findall would silently drop whitespace such as a lone "\n" before "}". Do not change.
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
# GGUF tokenizer.ggml.pre. "trillion" selects exactly the GPT-2 regex above in llama.cpp
# (LLAMA_VOCAB_PRE_TYPE_TRILLION shares the GPT2 case) but with clean_spaces = false. With "gpt-2",
# llama.cpp's detokenizer "cleans up" spaces: " ?" -> "?", " !" -> "!", " ," -> "," ... which
# corrupts generated code (`a ?? b` came back as `a?? b`). Nothing else differs.
PRE_TYPE = 'trillion'
_pat = regex.compile(GPT2_PATTERN)

SPECIALS = ['<bos>', '<eos>', '<fim_prefix>', '<fim_suffix>', '<fim_middle>', '<pad>']


def bytes_to_unicode():
    bs = list(range(ord('!'), ord('~') + 1)) + list(range(ord('¡'), ord('¬') + 1)) + list(range(ord('®'), ord('ÿ') + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


BYTE_ENCODER = bytes_to_unicode()
BYTE_DECODER = {v: k for k, v in BYTE_ENCODER.items()}


def pretokenize(text):
    return _pat.findall(text)


def to_unicode(word):
    return ''.join(BYTE_ENCODER[b] for b in word.encode('utf-8'))


def train(texts, vocab_size, specials=SPECIALS, min_count=2, progress=None):
    """Learns merges until the vocabulary (specials + 256 bytes + merges) holds vocab_size tokens."""
    n_merges = vocab_size - len(specials) - 256
    if n_merges < 0:
        raise ValueError('vocab_size too small for the byte alphabet and special tokens')
    counts = Counter()
    for t in texts:
        counts.update(pretokenize(t))
    words = [list(to_unicode(w)) for w in counts]
    freqs = list(counts.values())
    pair_counts = Counter()
    where = defaultdict(set)  # pair -> indices of words containing it
    for i, (w, f) in enumerate(zip(words, freqs)):
        for a, b in zip(w, w[1:]):
            pair_counts[(a, b)] += f
            where[(a, b)].add(i)
    merges = []
    while len(merges) < n_merges and pair_counts:
        # Highest count; ties broken deterministically by the pair itself.
        best, c = max(pair_counts.items(), key=lambda kv: (kv[1], kv[0]))
        if c < min_count:
            break
        merges.append(best)
        a, b = best
        ab = a + b
        for i in list(where[best]):
            w, f = words[i], freqs[i]
            for p in zip(w, w[1:]):
                pair_counts[p] -= f
                if pair_counts[p] <= 0:
                    del pair_counts[p]
            out, j = [], 0
            while j < len(w):
                if j + 1 < len(w) and w[j] == a and w[j + 1] == b:
                    out.append(ab)
                    j += 2
                else:
                    out.append(w[j])
                    j += 1
            words[i] = out
            for p in zip(out, out[1:]):
                pair_counts[p] += f
                where[p].add(i)
        del where[best]
        pair_counts.pop(best, None)
        if progress and len(merges) % 100 == 0:
            progress(len(merges))
    return Tokenizer(merges, specials)


class Tokenizer:
    def __init__(self, merges, specials=SPECIALS):
        self.specials = list(specials)
        self.merges = [tuple(m) for m in merges]
        self.tokens = list(self.specials) + [BYTE_ENCODER[b] for b in range(256)] + [a + b for a, b in self.merges]
        if len(set(self.tokens)) != len(self.tokens):
            raise ValueError('duplicate token in vocabulary')
        self.token_to_id = {t: i for i, t in enumerate(self.tokens)}
        self.ranks = {m: r for r, m in enumerate(self.merges)}
        self.special_ids = {s: i for i, s in enumerate(self.specials)}
        self._cache = {}

    # ids of the special tokens
    def sid(self, name):
        return self.special_ids[name]

    @property
    def vocab_size(self):
        return len(self.tokens)

    def token_types(self):
        """GGUF token_type: 1 normal, 3 control."""
        return [3 if i < len(self.specials) else 1 for i in range(len(self.tokens))]

    def _bpe(self, word):
        parts = list(word)
        while len(parts) > 1:
            best_rank, best_i = None, -1
            for i in range(len(parts) - 1):
                r = self.ranks.get((parts[i], parts[i + 1]))
                if r is not None and (best_rank is None or r < best_rank):
                    best_rank, best_i = r, i
            if best_rank is None:
                break
            parts[best_i:best_i + 2] = [parts[best_i] + parts[best_i + 1]]
        return parts

    def encode(self, text):
        """Plain text to ids (special-token text is tokenized as ordinary text)."""
        ids = []
        cache = self._cache
        for w in _pat.findall(text):
            got = cache.get(w)
            if got is None:
                got = [self.token_to_id[p] for p in self._bpe(to_unicode(w))]
                if len(cache) < 500_000:
                    cache[w] = got
            ids.extend(got)
        return ids

    def decode_bytes(self, ids):
        out = bytearray()
        for i in ids:
            if i < len(self.specials):
                continue
            out.extend(BYTE_DECODER[c] for c in self.tokens[i])
        return bytes(out)

    def decode(self, ids):
        return self.decode_bytes(ids).decode('utf-8', errors='replace')

    def to_json(self):
        return {'type': 'byte-level-bpe', 'pre': PRE_TYPE, 'pattern': GPT2_PATTERN, 'specials': self.specials,
                'merges': [a + ' ' + b for a, b in self.merges]}

    def save(self, path):
        with open(path, 'w', encoding='utf-8') as f:
            json.dump(self.to_json(), f, ensure_ascii=False, indent=0)

    @staticmethod
    def load(path):
        with open(path, encoding='utf-8') as f:
            d = json.load(f)
        return Tokenizer([tuple(m.split(' ')) for m in d['merges']], d['specials'])
