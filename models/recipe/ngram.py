"""Baseline: byte-level interpolated Kneser-Ney n-gram model (numpy only).

Orders 1..n (n <= 7: a 7-gram key is 56 bits). Highest order uses raw counts, lower orders
continuation counts N1+(. g); one absolute discount per order, D = n1 / (n1 + 2 n2); the unigram
level interpolates with the uniform distribution over 256 bytes. Documents are joined with a 0x00
separator byte, so the start of a document is modelled too.
"""
import numpy as np


class KneserNey:
    def __init__(self, data, order=5):
        """data: uint8 numpy array of training bytes."""
        assert 1 <= order <= 7
        self.n = order
        d = np.asarray(data, dtype=np.int64)
        self.levels = {}
        grams = {}
        for k in range(1, order + 1):
            keys = np.zeros(len(d) - k + 1, dtype=np.int64)
            for i in range(k):
                keys = keys * 256 + d[i:len(d) - k + 1 + i]
            grams[k] = np.unique(keys, return_counts=True)
        for k in range(1, order + 1):
            if k == order:
                keys, vals = grams[k]
            else:
                # continuation counts: distinct left extensions of each k-gram
                suffixes = grams[k + 1][0] % (256 ** k)
                keys, vals = np.unique(suffixes, return_counts=True)
            n1, n2 = int((vals == 1).sum()), int((vals == 2).sum())
            D = n1 / (n1 + 2 * n2) if n1 + n2 > 0 else 0.5
            ctx = keys // 256
            cu, start = np.unique(ctx, return_index=True)
            totals = np.add.reduceat(vals, start)
            types = np.diff(np.append(start, len(keys)))
            self.levels[k] = (keys, vals.astype(np.float64), D, cu, totals.astype(np.float64), types.astype(np.float64))

    @staticmethod
    def _lookup(sorted_keys, values, queries, default=0.0):
        i = np.searchsorted(sorted_keys, queries)
        i = np.minimum(i, len(sorted_keys) - 1)
        hit = sorted_keys[i] == queries
        return np.where(hit, values[i], default), hit

    def prob(self, ctx_keys, w):
        """P(w | context) for arrays: ctx_keys[k] = int key of the last k bytes before w (k = 0..n-1)."""
        w = np.asarray(w, dtype=np.int64)
        p = np.full(w.shape, 1 / 256.0)
        for k in range(1, self.n + 1):
            keys, vals, D, cu, totals, types = self.levels[k]
            h = ctx_keys[k - 1]
            c, _ = self._lookup(keys, vals, h * 256 + w)
            tot, has = self._lookup(cu, totals, h)
            ty, _ = self._lookup(cu, types, h)
            safe = np.where(has, tot, 1.0)
            p = np.where(has, np.maximum(c - D, 0) / safe + D * ty / safe * p, p)
        return p

    def _contexts(self, hist):
        """hist: int64 array (m, n-1) of preceding bytes (oldest first) -> list of context keys per order."""
        out = [np.zeros(hist.shape[0], dtype=np.int64)]
        key = np.zeros(hist.shape[0], dtype=np.int64)
        for j in range(1, self.n):
            key = key + hist[:, -j] * (256 ** (j - 1))
            out.append(key.copy())
        return out

    def bits(self, doc_bytes):
        """Total bits to encode one document (preceded by the 0x00 separator)."""
        x = np.concatenate([np.zeros(self.n - 1, dtype=np.int64), np.frombuffer(doc_bytes, dtype=np.uint8).astype(np.int64)])
        m = len(doc_bytes)
        hist = np.stack([x[i:i + m] for i in range(self.n - 1)], axis=1) if self.n > 1 else np.zeros((m, 0), dtype=np.int64)
        p = self.prob(self._contexts(hist), x[self.n - 1:])
        return float(-np.log2(p).sum())

    def greedy(self, prefix_bytes, max_bytes=120, stop=b'\n'):
        """Greedy continuation of prefix_bytes until a stop byte (not included)."""
        hist = list(np.zeros(self.n - 1, dtype=np.int64)) + list(prefix_bytes)
        out = bytearray()
        cand = np.arange(256, dtype=np.int64)
        for _ in range(max_bytes):
            h = np.array(hist[len(hist) - (self.n - 1):] if self.n > 1 else [], dtype=np.int64)
            hh = np.broadcast_to(h, (256, len(h)))
            b = int(np.argmax(self.prob(self._contexts(hh), cand)))
            if bytes([b]) == stop or b == 0:
                break
            out.append(b)
            hist.append(b)
        return bytes(out)


def train_bytes(docs):
    return np.frombuffer(b'\x00' + b'\x00'.join(d.encode('utf-8') for d in docs) + b'\x00', dtype=np.uint8)
