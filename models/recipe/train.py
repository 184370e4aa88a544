#!/usr/bin/python3
"""Step c: train the tiny model on CPU within a wall-clock budget, checkpointing as it goes.

The learning-rate schedule runs on elapsed time (warmup, then cosine to 10% at the budget), so a
run of any length ends annealed, and an interrupted run still leaves its last checkpoint.
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bpe  # noqa: E402
from data import Sampler, load_docs, token_stream  # noqa: E402
from model import Config, Model  # noqa: E402


def log(msg, f):
    line = f'{time.strftime("%H:%M:%S")} {msg}'
    print(line, file=f, flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--corpus', default='models/.cache/corpus')
    ap.add_argument('--tokenizer', default='models/recipe/tokenizer.json')
    ap.add_argument('--out', default='models/.cache/ckpt.pt')
    ap.add_argument('--minutes', type=float, default=55)
    ap.add_argument('--max-steps', type=int, default=10**9)
    ap.add_argument('--total-steps', type=int, default=0,
                    help='schedule by steps instead of wall clock (deterministic replay of a run: pass its step count)')
    ap.add_argument('--batch', type=int, default=16)
    ap.add_argument('--lr', type=float, default=3e-3)
    ap.add_argument('--warmup-steps', type=int, default=60)
    ap.add_argument('--fim-rate', type=float, default=0.5)
    ap.add_argument('--fim-pack', action='store_true', help='pack several short FIM examples per sequence')
    ap.add_argument('--checkpoint-minutes', type=float, default=3)
    ap.add_argument('--threads', type=int, default=1)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--config', default='{}', help='JSON overrides of model.Config')
    ap.add_argument('--log', default='-')
    ap.add_argument('--init-from', help='start from this checkpoint\'s weights (continued training; fresh optimizer)')
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    logf = sys.stdout if args.log == '-' else open(args.log, 'a')
    tok = bpe.Tokenizer.load(args.tokenizer)
    cfg = Config(vocab_size=tok.vocab_size, **json.loads(args.config))
    t0 = time.time()
    train_docs = load_docs(args.corpus, 'train')
    held_docs = load_docs(args.corpus, 'heldout')
    stream = token_stream(tok, train_docs)
    held_stream = token_stream(tok, held_docs)
    log(f'tokenized train {len(stream):,} tokens, held-out {len(held_stream):,} tokens in {time.time() - t0:.0f}s', logf)

    model = Model(cfg)
    prior = {'step': 0, 'tokens': 0, 'seconds': 0.0}
    if args.init_from:
        ck = torch.load(args.init_from, map_location='cpu')
        if ck['config'] != cfg.to_dict():
            raise SystemExit(f'--init-from config {ck["config"]} differs from {cfg.to_dict()}')
        model.load_state_dict(ck['model'])
        prior = {k: ck[k] for k in prior}
        log(f'continuing from {args.init_from}: {prior}', logf)
    log(f'config {cfg.to_dict()} params {model.n_params():,}', logf)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{'params': decay, 'weight_decay': 0.1}, {'params': no_decay, 'weight_decay': 0.0}],
                            lr=args.lr, betas=(0.9, 0.95), eps=1e-8)
    sampler = Sampler(tok, train_docs, stream, cfg.context, args.fim_rate, seed=args.seed, fim_pack=args.fim_pack)
    # Fixed held-out batches: plain windows, for a loss curve comparable across checkpoints.
    rng = np.random.default_rng(1)
    starts = rng.integers(0, len(held_stream) - cfg.context - 1, size=16)
    hx = torch.tensor(np.stack([held_stream[s:s + cfg.context] for s in starts]).astype(np.int64))
    hy = torch.tensor(np.stack([held_stream[s + 1:s + cfg.context + 1] for s in starts]).astype(np.int64))

    budget = args.minutes * 60
    start = time.time()
    last_ckpt = start
    step = tokens = 0
    ema = None

    def save(final=False):
        tmp = args.out + '.tmp'
        torch.save({'config': cfg.to_dict(), 'model': model.state_dict(), 'step': prior['step'] + step,
                    'tokens': prior['tokens'] + tokens, 'seconds': prior['seconds'] + time.time() - start, 'final': final, 'tokenizer': tok.to_json(),
                    'threads': args.threads, 'batch': args.batch, 'fim_rate': args.fim_rate,
                    'fim_pack': args.fim_pack, 'init_from': args.init_from}, tmp)
        os.replace(tmp, args.out)

    def held_loss():
        model.eval()
        with torch.no_grad():
            loss = F.cross_entropy(model(hx).view(-1, cfg.vocab_size), hy.view(-1)).item()
        model.train()
        return loss

    while True:
        elapsed = time.time() - start
        frac = step / args.total_steps if args.total_steps else elapsed / budget
        if frac >= 1 or step >= args.max_steps:
            break
        if step < args.warmup_steps:
            lr = args.lr * (step + 1) / args.warmup_steps
        else:
            lr = args.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, frac))))
        for g in opt.param_groups:
            g['lr'] = lr
        x, y = sampler.batch(args.batch)
        x, y = torch.from_numpy(x), torch.from_numpy(y)
        logits = model(x)
        loss = F.cross_entropy(logits.view(-1, cfg.vocab_size), y.view(-1), ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        tokens += int((y != -100).sum())
        ema = loss.item() if ema is None else 0.98 * ema + 0.02 * loss.item()
        if step % 20 == 0:
            el = time.time() - start
            log(f'step {step} loss {ema:.3f} lr {lr:.2e} tokens {tokens:,} {tokens / el:.0f} tok/s elapsed {el / 60:.1f}m', logf)
        if time.time() - last_ckpt > args.checkpoint_minutes * 60:
            hl = held_loss()
            log(f'checkpoint step {step} held-out loss {hl:.3f} nats/token ({hl / math.log(2) * len(held_stream) / sum(len(d.encode()) for d in held_docs):.3f} bits/byte approx)', logf)
            save()
            last_ckpt = time.time()
    hl = held_loss()
    save(final=True)
    log(f'done step {step} tokens {tokens:,} in {(time.time() - start) / 60:.1f}m held-out loss {hl:.3f}', logf)


if __name__ == '__main__':
    main()
