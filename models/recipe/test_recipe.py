"""Unit tests for the recipe, on tiny synthetic data (seconds, no corpus, no network).

    /usr/bin/python3 -m unittest discover -s models/recipe -p 'test_*.py' -v

Needs python3-numpy and python3-regex; the end-to-end training test also needs python3-torch and is
skipped without it.
"""
import os
import random
import sys
import tempfile
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bpe  # noqa: E402
import gguf  # noqa: E402
import ngram  # noqa: E402
from data import Sampler, psm, split_fim, token_stream  # noqa: E402
from export import REQUIRED_KEYS, metadata  # noqa: E402

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

CORPUS = [
    "export function add(a: number, b: number): number {\n  return a + b;\n}\n",
    "const items = list.map((item) => item.value * 2);\nconsole.log(items);\n",
    "interface User {\n  id: string;\n  name?: string;\n}\n\nexport type Users = User[];\n",
    "for (let i = 0; i < 10; i++) {\n\tif (i % 2 === 0) continue;\n\tsum += i;\n}\n",
] * 5

TRICKY = [
    '', ' ', '\n', 'x', '}\n}\n', ';\n}', 'a  b   c\t\td', '\r\nwin\r\n', "it's don't we'll",
    'café naïve Ω 日本語 🚀', '<eos><fim_prefix>', '\u00a0nbsp\u3000', '   trailing   ', '1234567 0x1F 3.14',
]


class TokenizerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tok = bpe.train(CORPUS, 300, min_count=1)

    def test_vocabulary_layout(self):
        tok = self.tok
        self.assertEqual(tok.vocab_size, 300)
        self.assertEqual(tok.tokens[:6], bpe.SPECIALS)
        self.assertEqual(len(tok.tokens), len(set(tok.tokens)))
        self.assertEqual(tok.token_types()[:6], [3] * 6)
        self.assertTrue(all(t == 1 for t in tok.token_types()[6:]))
        # every merge's parts and result are tokens, and merged strings hold no literal space
        for a, b in tok.merges:
            self.assertIn(a, tok.token_to_id)
            self.assertIn(b, tok.token_to_id)
            self.assertIn(a + b, tok.token_to_id)
            self.assertNotIn(' ', a + b)

    def test_pretokenizer_keeps_every_character(self):
        # A regex without the final \s+ alternative drops a lone "\n" before "}" (llama.cpp keeps it).
        for t in TRICKY + CORPUS[:4]:
            self.assertEqual(''.join(bpe.pretokenize(t)), t)
        self.assertEqual(bpe.pretokenize(';\n}'), [';', '\n', '}'])
        self.assertEqual(bpe.pretokenize('a  b'), ['a', ' ', ' b'])

    def test_round_trip(self):
        rng = random.Random(0)
        alphabet = 'ab {}();\n\t  é日🚀\'s'
        texts = TRICKY + CORPUS[:4] + [''.join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(200)]
        for t in texts:
            self.assertEqual(self.tok.decode(self.tok.encode(t)), t)

    def test_merges_compress_and_specials_stay_text(self):
        ids = self.tok.encode(CORPUS[0])
        self.assertLess(len(ids), len(CORPUS[0].encode()))
        ids = self.tok.encode('<fim_prefix>')
        self.assertNotIn(self.tok.sid('<fim_prefix>'), ids)
        self.assertTrue(all(i >= 6 for i in ids))

    def test_merge_priority_is_by_rank(self):
        tok = bpe.Tokenizer([('a', 'b'), ('b', 'c'), ('ab', 'c')])
        self.assertEqual([tok.tokens[i] for i in tok.encode('abc')], ['abc'])
        tok = bpe.Tokenizer([('b', 'c'), ('a', 'b')])
        self.assertEqual([tok.tokens[i] for i in tok.encode('abc')], ['a', 'bc'])

    def test_save_load(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, 't.json')
            self.tok.save(p)
            t2 = bpe.Tokenizer.load(p)
        self.assertEqual(t2.tokens, self.tok.tokens)
        self.assertEqual(t2.encode(CORPUS[2]), self.tok.encode(CORPUS[2]))

    def test_byte_table_is_gpt2s(self):
        self.assertEqual(bpe.BYTE_ENCODER[ord(' ')], 'Ġ')
        self.assertEqual(bpe.BYTE_ENCODER[ord('\n')], 'Ċ')
        self.assertEqual(bpe.BYTE_ENCODER[ord('A')], 'A')
        self.assertEqual(len(set(bpe.BYTE_ENCODER.values())), 256)


class FimLayoutTest(unittest.TestCase):
    def setUp(self):
        self.tok = bpe.Tokenizer([])

    def test_psm_layout(self):
        S = self.tok.sid
        seq = psm(self.tok, [10, 11], [20], [30, 31], 100)
        self.assertEqual(seq, [S('<fim_prefix>'), 10, 11, S('<fim_suffix>'), 20, S('<fim_middle>'), 30, 31, S('<eos>')])

    def test_psm_trims_prefix_start_and_suffix_end(self):
        seq = psm(self.tok, list(range(100, 200)), list(range(300, 400)), [7], 40)
        self.assertEqual(len(seq), 40)
        pre = seq[1:seq.index(self.tok.sid('<fim_suffix>'))]
        suf = seq[seq.index(self.tok.sid('<fim_suffix>')) + 1:seq.index(self.tok.sid('<fim_middle>'))]
        self.assertEqual(pre[-1], 199)  # the text nearest the cursor is kept
        self.assertEqual(suf[0], 300)
        self.assertEqual(len(suf), (40 - 3 - 2) // 4)

    def test_sampler_batches(self):
        tok = bpe.train(CORPUS, 300, min_count=1)
        S = tok.sid
        for pack in (False, True):
            smp = Sampler(tok, CORPUS, token_stream(tok, CORPUS), 64, fim_rate=1.0, seed=0, fim_pack=pack)
            x, y = smp.batch(4)
            self.assertEqual(x.shape, (4, 64))
            for row_x, row_y in zip(x, y):
                self.assertEqual(row_x[0], S('<fim_prefix>'))
                n = int((row_y != -100).sum())
                np.testing.assert_array_equal(row_x[1:n], row_y[:n - 1])  # targets are inputs shifted by one
        seq = Sampler(tok, CORPUS, token_stream(tok, CORPUS), 256, fim_rate=1.0, seed=0, fim_pack=True).packed_fim()
        self.assertEqual(len(seq), 257)
        self.assertGreater(seq.count(S('<fim_middle>')), 1)

    def test_split_fim_partitions_text(self):
        rng = random.Random(1)
        text = ''.join(CORPUS[:4])
        for _ in range(200):
            p, m, s = split_fim(text, rng)
            self.assertEqual(p + m + s, text)


class GgufTest(unittest.TestCase):
    def test_write_read_round_trip(self):
        rng = np.random.default_rng(0)
        w = rng.standard_normal((8, 64)).astype(np.float32)
        n = rng.standard_normal(64).astype(np.float32)
        meta = {'general.architecture': 'llama', 'llama.block_count': gguf.U32(1), 'eps': gguf.F32(1e-5),
                'flag': False, 'tokens': ['a', 'Ġb'], 'types': [gguf.I32(1), gguf.I32(3)]}
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, 'x.gguf')
            gguf.write(p, meta, [('w16', w, gguf.GGML_F16), ('n', n, gguf.GGML_F32), ('w8', w, gguf.GGML_Q8_0)])
            with open(p, 'rb') as f:
                raw = f.read()
            m2, t2 = gguf.read(p)
        self.assertEqual(raw[:4], b'GGUF')
        self.assertEqual(m2['general.architecture'], 'llama')
        self.assertEqual(m2['llama.block_count'], 1)
        self.assertAlmostEqual(m2['eps'], 1e-5, places=9)
        self.assertEqual(m2['tokens'], ['a', 'Ġb'])
        self.assertEqual(m2['types'], [1, 3])
        self.assertEqual(t2['w16'][0], [64, 8])  # dims are [in, out] for a (out, in) weight
        np.testing.assert_allclose(t2['w16'][2], w, atol=2e-3)
        np.testing.assert_array_equal(t2['n'][2], n)
        np.testing.assert_allclose(t2['w8'][2], w, atol=np.abs(w).max() / 127)

    def test_q8_0_rejects_odd_rows(self):
        with tempfile.TemporaryDirectory() as d, self.assertRaises(ValueError):
            gguf.write(os.path.join(d, 'x.gguf'), {}, [('w', np.zeros((2, 20), np.float32), gguf.GGML_Q8_0)])

    def test_export_metadata_is_complete(self):
        tok = bpe.Tokenizer([('a', 'b')])
        cfg = {'vocab_size': tok.vocab_size, 'dim': 32, 'n_layers': 1, 'n_heads': 2, 'n_kv_heads': 1,
               'ffn_dim': 64, 'context': 64, 'norm_eps': 1e-5, 'rope_base': 10000.0}
        meta = metadata(cfg, tok)
        for k in REQUIRED_KEYS:
            self.assertIn(k, meta)
        self.assertEqual(meta['tokenizer.ggml.pre'], 'trillion')  # GPT-2 regex, no space clean-up
        self.assertEqual(meta['llama.rope.dimension_count'], 16)
        self.assertEqual(len(meta['tokenizer.ggml.token_type']), len(meta['tokenizer.ggml.tokens']))
        self.assertEqual(meta['tokenizer.ggml.merges'], ['a b'])
        self.assertEqual(meta['tokenizer.ggml.fim_mid_token_id'], tok.sid('<fim_middle>'))


class NgramTest(unittest.TestCase):
    def test_distribution_sums_to_one(self):
        kn = ngram.KneserNey(ngram.train_bytes(CORPUS), 4)
        for ctx in (b'ret', b'\x01\x02\x03', b'  r'):
            h = np.broadcast_to(np.frombuffer(ctx, np.uint8).astype(np.int64), (256, 3))
            self.assertAlmostEqual(float(kn.prob(kn._contexts(h), np.arange(256)).sum()), 1.0, places=9)
        self.assertLess(kn.bits(CORPUS[0].encode()) / len(CORPUS[0]), 2.0)  # seen text is cheap
        self.assertTrue(kn.greedy(b'export function add(a: number, b: num').startswith(b'ber'))


@unittest.skipIf(torch is None, 'python3-torch is not installed')
class ModelTest(unittest.TestCase):
    def test_rope_rotates_adjacent_pairs(self):
        from model import apply_rope, rope_tables
        cos, sin = rope_tables(4, 3, 10000.0)
        x = torch.tensor([[[[1.0, 0.0, 1.0, 0.0]] * 3]])
        y = apply_rope(x, cos, sin)[0, 0]
        # position p rotates pair (x0, x1) by angle p and pair (x2, x3) by p / 100
        for p in range(3):
            self.assertAlmostEqual(float(y[p, 0]), np.cos(p), places=5)
            self.assertAlmostEqual(float(y[p, 1]), np.sin(p), places=5)
            self.assertAlmostEqual(float(y[p, 3]), np.sin(p / 100), places=5)

    def test_train_a_few_steps_then_export(self):
        from export import tensors_from_state
        from model import Config, Model
        torch.manual_seed(0)
        torch.set_num_threads(1)
        tok = bpe.train(CORPUS, 300, min_count=1)
        cfg = Config(vocab_size=tok.vocab_size, dim=32, n_layers=2, n_heads=2, n_kv_heads=1, ffn_dim=64, context=64)
        model = Model(cfg)
        ids = []
        for d in CORPUS:
            ids += tok.encode(d) + [tok.sid('<eos>')]
        data = torch.tensor(ids)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
        losses = []
        for step in range(40):
            starts = torch.randint(0, len(data) - cfg.context - 1, (4,))
            x = torch.stack([data[s:s + cfg.context] for s in starts])
            y = torch.stack([data[s + 1:s + cfg.context + 1] for s in starts])
            loss = torch.nn.functional.cross_entropy(model(x).view(-1, cfg.vocab_size), y.view(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        self.assertLess(np.mean(losses[-5:]), np.mean(losses[:5]) - 1.0)
        model.eval()
        prompt = tok.encode('export function')
        self.assertEqual(model.greedy(prompt, 12), model.greedy_cached(prompt, 12))
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, 'toy.gguf')
            gguf.write(p, metadata(cfg.to_dict(), tok), tensors_from_state(model.state_dict(), cfg.to_dict(), gguf.GGML_F32))
            meta, tensors = gguf.read(p)
        self.assertEqual(meta['llama.attention.head_count_kv'], 1)
        self.assertEqual(len(tensors), 2 + 9 * cfg.n_layers)
        self.assertEqual(tensors['blk.0.attn_k.weight'][0], [32, 16])
        np.testing.assert_array_equal(tensors['blk.1.ffn_down.weight'][2], model.blocks[1].w_down.weight.detach().numpy())


if __name__ == '__main__':
    unittest.main()
