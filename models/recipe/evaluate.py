#!/usr/bin/python3
"""Step e: held-out evaluation of the model beside a byte-level Kneser-Ney n-gram baseline, in one run.

- bits per byte over every held-out file (packages never seen in training), both models.
  Model: each file follows an <eos> separator (as in training), scored in 512-token windows with a
  stride of 256 (every token after the first window sees >= 256 tokens of context). Bits are those
  of the canonical tokenization, an upper bound on the model's true bits for the bytes.
  Baseline: byte-level interpolated Kneser-Ney, trained on the same training split.
- single-line FIM exact match: one non-blank line (8-80 chars) masked from a held-out file;
  model: PSM prompt (the same layout and trimming as the gateway's model host), greedy until a
  newline or <eos>; baseline: greedy bytes from the prefix only, until a newline.
  Also the model from the prefix only (no suffix), to show what the suffix adds.
"""
import argparse
import json
import math
import os
import random
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bpe  # noqa: E402
import ngram  # noqa: E402
from data import load_docs, psm  # noqa: E402
from model import Config, Model  # noqa: E402


def model_bits(model, tok, doc, T):
    """Bits for doc's tokens after an <eos> separator; windows of T inputs advancing by T/2."""
    ids = [tok.sid('<eos>')] + tok.encode(doc)
    total, done = 0.0, 0  # ids[1..done] are scored
    while done < len(ids) - 1:
        lo = max(0, done - T // 2)
        window = ids[lo:lo + T + 1]
        with torch.no_grad():
            logp = F.log_softmax(model(torch.tensor([window[:-1]]))[0].double(), -1)
        tgt = torch.tensor(window[1:])
        lp = logp[torch.arange(len(tgt)), tgt]
        total += -float(lp[done - lo:].sum()) / math.log(2)
        done = lo + len(window) - 1
    return total


def fim_cases(docs, n, seed=0):
    rng = random.Random(seed)
    cands = []
    for di, d in enumerate(docs):
        lines = d.split('\n')
        off = 0
        for li, line in enumerate(lines):
            if 0 < li < len(lines) - 1 and 8 <= len(line.strip()) <= 80 and len(line) <= 100:
                cands.append((di, off, len(line)))
            off += len(line) + 1
    rng.shuffle(cands)
    out = []
    for di, off, ln in cands[:n]:
        d = docs[di]
        out.append((d[:off], d[off:off + ln], d[off + ln:]))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--ckpt', default='models/.cache/ckpt.pt')
    ap.add_argument('--corpus', default='models/.cache/corpus')
    ap.add_argument('--orders', default='5,7', help='n-gram baseline orders to report; the best is "the baseline"')
    ap.add_argument('--fim-cases', type=int, default=300)
    ap.add_argument('--max-middle-tokens', type=int, default=48)
    ap.add_argument('--out', default='models/eval.json')
    ap.add_argument('--max-files', type=int, default=0, help='smoke tests: only the first N held-out files')
    args = ap.parse_args()
    torch.set_num_threads(1)
    t0 = time.time()
    ck = torch.load(args.ckpt, map_location='cpu')
    cfg = Config(**ck['config'])
    d = ck['tokenizer']
    tok = bpe.Tokenizer([tuple(m.split(' ')) for m in d['merges']], d['specials'])
    model = Model(cfg)
    model.load_state_dict(ck['model'])
    model.eval()
    train_docs = load_docs(args.corpus, 'train')
    held = load_docs(args.corpus, 'heldout')
    if args.max_files:
        held = held[:args.max_files]
    nbytes = sum(len(x.encode()) for x in held)
    res = {'checkpoint': {k: ck[k] for k in ('step', 'tokens', 'seconds', 'final')}, 'params': model.n_params(),
           'heldout': {'files': len(held), 'bytes': nbytes, 'tokens': sum(len(tok.encode(x)) for x in held)}}

    # bits per byte
    mbits = sum(model_bits(model, tok, x, cfg.context) for x in held)
    res['model_bpb'] = mbits / nbytes
    print(f'model bpb {res["model_bpb"]:.4f} ({time.time() - t0:.0f}s)', file=sys.stderr)
    data = ngram.train_bytes(train_docs)
    baselines = {}
    for order in [int(o) for o in args.orders.split(',')]:
        kn = ngram.KneserNey(data, order)
        baselines[order] = {'model': kn, 'bpb': sum(kn.bits(x.encode()) for x in held) / nbytes}
        print(f'{order}-gram bpb {baselines[order]["bpb"]:.4f} ({time.time() - t0:.0f}s)', file=sys.stderr)
    best = min(baselines, key=lambda o: baselines[o]['bpb'])
    res['baseline'] = f'byte-level interpolated Kneser-Ney {best}-gram'
    res['ngram_bpb'] = {f'{o}-gram': b['bpb'] for o, b in baselines.items()}
    res['baseline_bpb'] = baselines[best]['bpb']

    # single-line FIM exact match
    cases = fim_cases(held, args.fim_cases)
    S = tok.sid
    eos = S('<eos>')
    nl_tokens = {i for i in range(tok.vocab_size) if b'\n' in tok.decode_bytes([i])}
    stop = lambda t: t == eos or t in nl_tokens  # noqa: E731
    systems = ('model_fim', 'model_prefix_only', 'baseline_prefix_only')
    score = {k: {'exact': 0, 'exact_ignoring_surrounding_whitespace': 0, 'prefix_chars': 0.0} for k in systems}
    examples = []
    kn = baselines[best]['model']
    for i, (pre, mid, suf) in enumerate(cases):
        prompt = psm(tok, tok.encode(pre), tok.encode(suf), [], cfg.context - args.max_middle_tokens, with_eos=False)
        got = {}
        out = model.greedy_cached(prompt, args.max_middle_tokens, stop)
        got['model_fim'] = tok.decode_bytes(out).split(b'\n')[0].decode('utf-8', 'replace')
        ptoks = tok.encode(pre)[-(cfg.context - args.max_middle_tokens):]
        out = model.greedy_cached(ptoks, args.max_middle_tokens, stop)
        got['model_prefix_only'] = tok.decode_bytes(out).split(b'\n')[0].decode('utf-8', 'replace')
        got['baseline_prefix_only'] = kn.greedy(pre.encode()[-4096:], max_bytes=len(mid.encode()) + 40).decode('utf-8', 'replace')
        for k in systems:
            g = got[k]
            score[k]['exact'] += g == mid
            score[k]['exact_ignoring_surrounding_whitespace'] += g.strip() == mid.strip()
            n = 0
            while n < min(len(g), len(mid)) and g[n] == mid[n]:
                n += 1
            score[k]['prefix_chars'] += n / len(mid)
        if i < 12:
            examples.append({'middle': mid, **got})
    res['fim'] = {
        'cases': len(cases),
        'metrics': 'exact: generated line == masked line; exact_ignoring_surrounding_whitespace: after strip(); '
                   'prefix_chars: mean fraction of the masked line reproduced before the first wrong character',
        **{k: {m: v / len(cases) for m, v in score[k].items()} for k in systems},
        'examples': examples,
    }
    res['eval_seconds'] = time.time() - t0
    print(f'FIM exact match: {res["fim"]}', file=sys.stderr)
    with open(args.out, 'w', encoding='utf-8') as f:
        json.dump(res, f, indent=1, ensure_ascii=False)
        f.write('\n')
    print(json.dumps({k: v for k, v in res.items() if k != 'fim'} | {'fim': {k: v for k, v in res['fim'].items() if k != 'examples'}}, indent=1))


if __name__ == '__main__':
    main()
