#!/usr/bin/env bash
# Rebuilds models/flint-tiny.gguf from scratch, offline, on CPU. Run from the repository root:
#
#   nohup models/recipe/run.sh > models/.cache/run.log 2>&1 &
#
# Environment:
#   TRAIN_MINUTES  phase-1 wall-clock budget (default 58); the LR schedule follows it
#   FT_MINUTES     phase-2 (packed-FIM continuation) budget (default 20)
#   TOTAL_STEPS / FT_TOTAL_STEPS  instead, fixed step counts (deterministic; shipped run: 1312 / 604)
#   THREADS        torch threads for training (default 1: the machine is shared)
#   STEPS          which steps to run (default: "corpus tokenizer train export fixtures parity eval speed")
#
# Needs: apt-get install -y python3-torch python3-numpy python3-regex libopenblas0-openmp
# and `npm ci` (node_modules is both the corpus and node-llama-cpp).
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=/usr/bin/python3          # Debian's python3 with python3-torch, not a pyenv one earlier on PATH
export OMP_NUM_THREADS="${THREADS:-1}" OPENBLAS_NUM_THREADS="${THREADS:-1}"
CACHE=models/.cache
mkdir -p "$CACHE"
STEPS="${STEPS:-corpus tokenizer train export fixtures parity eval speed}"
has() { [[ " $STEPS " == *" $1 "* ]]; }

if has corpus; then
  echo "== corpus"
  $PY models/recipe/corpus.py --node-modules node_modules --out "$CACHE/corpus" --manifest models/corpus-manifest.json
fi
if has tokenizer; then
  echo "== tokenizer"
  $PY models/recipe/train_tokenizer.py --corpus "$CACHE/corpus" --out models/recipe/tokenizer.json --vocab-size 1024
fi
if has train; then
  echo "== train phase 1: 50% FIM (one example per sequence), 50% plain (log: $CACHE/train.log)"
  extra=()
  [[ -n "${TOTAL_STEPS:-}" ]] && extra+=(--total-steps "$TOTAL_STEPS" --minutes 100000)
  $PY models/recipe/train.py --corpus "$CACHE/corpus" --tokenizer models/recipe/tokenizer.json \
    --out "$CACHE/ckpt-phase1.pt" --log "$CACHE/train.log" --threads "${THREADS:-1}" \
    --minutes "${TRAIN_MINUTES:-58}" --batch 8 --lr 2.5e-3 --warmup-steps 100 --fim-rate 0.5 "${extra[@]}"
  echo "== train phase 2: 60% packed short FIM examples, 40% plain (log: $CACHE/train-ft.log)"
  extra=()
  [[ -n "${FT_TOTAL_STEPS:-}" ]] && extra+=(--total-steps "$FT_TOTAL_STEPS" --minutes 100000)
  $PY models/recipe/train.py --corpus "$CACHE/corpus" --tokenizer models/recipe/tokenizer.json \
    --init-from "$CACHE/ckpt-phase1.pt" --out "$CACHE/ckpt.pt" --log "$CACHE/train-ft.log" --threads "${THREADS:-1}" \
    --minutes "${FT_MINUTES:-20}" --batch 8 --lr 1.5e-3 --warmup-steps 30 --fim-rate 0.6 --fim-pack --seed 1 "${extra[@]}"
fi
if has export; then
  echo "== export"
  $PY models/recipe/export.py --ckpt "$CACHE/ckpt.pt" --out models/flint-tiny.gguf --type f16
fi
if has fixtures; then
  echo "== fixtures"
  $PY models/recipe/fixtures.py --tokenizer models/recipe/tokenizer.json --corpus "$CACHE/corpus" \
    --out models/fixtures/tokenizer.json --ckpt "$CACHE/ckpt.pt" \
    --generation models/fixtures/generation.json --parity "$CACHE/parity.json"
fi
if has parity; then
  echo "== parity (node-llama-cpp vs recipe)"
  node models/recipe/parity.mjs models/flint-tiny.gguf "$CACHE/parity.json" | tee "$CACHE/parity-report.json"
fi
if has eval; then
  echo "== eval (held-out packages; model vs n-gram baseline)"
  $PY models/recipe/evaluate.py --ckpt "$CACHE/ckpt.pt" --corpus "$CACHE/corpus" --out models/eval.json
fi
if has speed; then
  echo "== speed (node-llama-cpp, 1 thread)"
  npx tsx models/recipe/speed.ts models/flint-tiny.gguf 7 | tee "$CACHE/speed.jsonl"
fi
