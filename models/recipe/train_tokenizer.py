#!/usr/bin/python3
"""Step b: train the byte-level BPE on the training split (a deterministic sample of files)."""
import argparse
import json
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bpe  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--corpus', default='models/.cache/corpus')
    ap.add_argument('--out', default='models/recipe/tokenizer.json')
    ap.add_argument('--vocab-size', type=int, default=1024)
    ap.add_argument('--sample-bytes', type=int, default=6_000_000)
    args = ap.parse_args()
    docs = [json.loads(l)['text'] for l in open(os.path.join(args.corpus, 'train.jsonl'), encoding='utf-8')]
    random.Random(0).shuffle(docs)
    sample, n = [], 0
    for d in docs:
        if n >= args.sample_bytes:
            break
        sample.append(d)
        n += len(d)
    t0 = time.time()
    tok = bpe.train(sample, args.vocab_size, progress=lambda k: print(f'{k} merges {time.time() - t0:.0f}s', file=sys.stderr))
    tok.save(args.out)
    held = [json.loads(l)['text'] for l in open(os.path.join(args.corpus, 'heldout.jsonl'), encoding='utf-8')]
    nb = sum(len(d.encode()) for d in held)
    nt = sum(len(tok.encode(d)) for d in held)
    print(f'vocab {tok.vocab_size}, {len(tok.merges)} merges, held-out {nb / nt:.3f} bytes/token, {time.time() - t0:.0f}s')


if __name__ == '__main__':
    main()
