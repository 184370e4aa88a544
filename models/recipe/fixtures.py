#!/usr/bin/python3
"""Writes parity fixtures from the recipe's own tokenizer and PyTorch model.

- models/fixtures/tokenizer.json (committed, used by models/flintTiny.test.ts): {text, ids} pairs.
- --parity OUT (not committed): many held-out snippets plus greedy generations and next-token
  probabilities of the checkpoint, for models/recipe/parity.mjs.
"""
import argparse
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bpe  # noqa: E402

SAMPLES = [
    'function add(a: number, b: number): number {\n  return a + b;\n}\n',
    "import { readFile } from 'node:fs/promises';\n",
    'export const x = 42;',
    'const s = "it\'s a test, isn\'t it? we\'ll see, they\'d say, I\'m sure, you\'re right, we\'ve won";',
    '    \t  \n\n\n   x',
    'a  b   c    d\t\te',
    'trailing spaces   \n',
    '  leading',
    '\r\nwindows\r\nlines\r\n',
    'x=1e10+0x1F-0b101*3.14159/123456789',
    'πr² ≈ 3.14; café; naïve; Ωmega',
    '// 日本語のコメント: 関数を定義する\nconst 変数 = "値";',
    'emoji 🚀🔥 done 👍🏽',
    '<eos><fim_prefix>literal special-token text<fim_middle>',
    '<|endoftext|> </s> <s>',
    'if (a && b || !c) { arr[i++] = obj?.prop ?? null; }',
    '`template ${literal} with ${nested ? `inner ${x}` : ""}`',
    '/** JSDoc\n * @param {string} name\n * @returns {Promise<void>}\n */',
    'class Foo<T extends Record<string, unknown>> implements Bar {}',
    'ALL_CAPS_CONST __dunder__ $jquery _private camelCase PascalCase kebab-case',
    '123abc abc123 1,000,000 ٣٤٥ ⅷ',
    ' ',
    '',
    '\n',
    'x',
    "'s's't're've'm'll'd 'S 'T",
    '\u00a0non\u2003breaking\u3000spaces',
    'zero\u200bwidth',
    '\ud55c\uad6d\uc5b4 \u0939\u093f\u0928\u094d\u0926\u0940',
]


GENERATION_PROMPTS = [
    {'kind': 'infill', 'prefix': 'export function add(a: number, b: number): number {\n  return ', 'suffix': ';\n}\n'},
    {'kind': 'infill', 'prefix': 'let total = 0;\nfor (let i = 0; i < items.length; ', 'suffix': ') {\n  total += items[i];\n}\n'},
    {'kind': 'infill', 'prefix': "import { readFile } from '", 'suffix': "';\n\nexport async function load(path: string) {\n  return readFile(path, 'utf8');\n}\n"},
    {'kind': 'infill', 'prefix': 'export interface User {\n  id: string;\n  ', 'suffix': '\n}\n'},
    {'kind': 'complete', 'prompt': '/**\n * Returns the sum of two numbers.\n */\nexport function sum('},
    {'kind': 'complete', 'prompt': 'const result = await fetch(url);\nif (!result.ok) {\n  throw new '},
]


def write_generation(tok, ckpt, out_path, max_tokens=24, margin=0.01):
    """PyTorch greedy generations for fixed prompts, cut where the top-2 probability gap falls under
    `margin` (so f16/q8_0 rounding in llama.cpp cannot flip a token the test expects)."""
    import torch
    from data import psm
    from model import Config, Model
    torch.set_num_threads(1)
    ck = torch.load(ckpt, map_location='cpu')
    model = Model(Config(**ck['config']))
    model.load_state_dict(ck['model'])
    model.eval()
    eos = tok.sid('<eos>')
    cases = []
    for p in GENERATION_PROMPTS:
        if p['kind'] == 'infill':
            ids = psm(tok, tok.encode(p['prefix']), tok.encode(p['suffix']), [], 10**6, with_eos=False)
        else:
            ids = tok.encode(p['prompt'])
        out, stopped = [], False
        cache = []
        logits = model.step(list(ids), cache)
        for _ in range(max_tokens):
            probs = logits[-1].double().softmax(-1)
            top = torch.topk(probs, 2)
            if float(top.values[0] - top.values[1]) < margin:
                break
            t = int(top.indices[0])
            if t == eos:
                stopped = True
                break
            out.append(t)
            logits = model.step([t], cache)
        cases.append({**p, 'promptIds': ids, 'expectedIds': out, 'expectedText': tok.decode(out), 'endsWithEos': stopped})
    with open(out_path, 'w', encoding='utf-8') as f:
        json.dump({'about': 'PyTorch greedy output of the checkpoint exported to models/flint-tiny.gguf; '
                   'generation stops where the top-2 gap < %.2f (or at <eos> when endsWithEos).' % margin,
                   'cases': cases}, f, ensure_ascii=False, indent=1)
        f.write('\n')
    print(f'wrote {out_path}: ' + '; '.join(repr(c['expectedText']) for c in cases))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--tokenizer', default='models/recipe/tokenizer.json')
    ap.add_argument('--out', default='models/fixtures/tokenizer.json')
    ap.add_argument('--corpus', default='models/.cache/corpus')
    ap.add_argument('--heldout-snippets', type=int, default=16, help='held-out code snippets in the committed fixture')
    ap.add_argument('--parity', help='also write a parity file with many snippets and greedy generations')
    ap.add_argument('--ckpt', default='models/.cache/ckpt.pt')
    ap.add_argument('--greedy-tokens', type=int, default=64)
    ap.add_argument('--generation', help='write greedy-generation expectations for models/flintTiny.test.ts')
    args = ap.parse_args()
    tok = bpe.Tokenizer.load(args.tokenizer)
    rng = random.Random(0)
    held = []
    hp = os.path.join(args.corpus, 'heldout.jsonl')
    if os.path.exists(hp):
        held = [json.loads(l)['text'] for l in open(hp, encoding='utf-8')]

    def snippet(d, n):
        s = rng.randrange(0, max(1, len(d) - n))
        return d[s:s + n]

    texts = list(SAMPLES) + [snippet(rng.choice(held), rng.randint(100, 400)) for _ in range(args.heldout_snippets if held else 0)]
    fixture = {
        'about': 'Byte-level BPE ids from models/recipe/bpe.py; node-llama-cpp must tokenize each text (specials off) to the same ids.',
        'special': {s: tok.sid(s) for s in tok.specials},
        'vocabSize': tok.vocab_size,
        'cases': [{'text': t, 'ids': tok.encode(t)} for t in texts],
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, 'w', encoding='utf-8') as f:
        json.dump(fixture, f, ensure_ascii=False, indent=1)
        f.write('\n')
    print(f'wrote {args.out}: {len(texts)} cases')

    if args.generation:
        write_generation(tok, args.ckpt, args.generation)

    if args.parity:
        import torch
        from model import Config, Model
        torch.set_num_threads(1)
        many = list(SAMPLES) + [snippet(d, rng.randint(50, 2000)) for d in held for _ in range(3)] + held
        ck = torch.load(args.ckpt, map_location='cpu')
        model = Model(Config(**ck['config']))
        model.load_state_dict(ck['model'])
        model.eval()
        S = tok.sid
        greedy = []
        for i in range(6):
            d = rng.choice(held)
            s = snippet(d, 600)
            if i % 2 == 0:  # a FIM prompt
                cut1, cut2 = len(s) // 2, len(s) // 2 + 40
                prompt = [S('<fim_prefix>')] + tok.encode(s[:cut1]) + [S('<fim_suffix>')] + tok.encode(s[cut2:]) + [S('<fim_middle>')]
            else:
                prompt = tok.encode(s)
            with torch.no_grad():
                p = model(torch.tensor([prompt]))[0, -1].double().softmax(-1)
            top = torch.topk(p, 20)
            expected = model.greedy(prompt, args.greedy_tokens, stop_ids=(S('<eos>'),))  # <eos> ends it
            greedy.append({'prompt': prompt, 'expected': expected,
                           'probs': [[int(j), float(q)] for q, j in zip(top.values, top.indices)]})
        with open(args.parity, 'w', encoding='utf-8') as f:
            json.dump({'tokenize': [{'text': t, 'ids': tok.encode(t)} for t in many], 'greedy': greedy}, f, ensure_ascii=False)
        print(f'wrote {args.parity}: {len(many)} texts, {len(greedy)} greedy prompts')


if __name__ == '__main__':
    main()
