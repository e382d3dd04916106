#!/usr/bin/env bash
# karpathy/ng-video-lecture gpt.py: a tiny char GPT on synthetic text, 40 steps, CPU.
# The script's hyperparameters are module constants: the launcher runs a scratch copy with the same
# constants shrunk by sed (applied identically to the original and to the converted script).
NAME=ngvl_gpt
source "$(dirname "$0")/_common.sh"
"$PYTHON" - <<'PY'
import random
random.seed(0)
words = ["the", "king", "queen", "shall", "not", "be", "moved", "o", "thou", "art", "of", "and"]
open("input.txt", "w").write("\n".join(" ".join(random.choice(words) for _ in range(12)) for _ in range(2000)))
PY
sed -e 's/^batch_size = 64/batch_size = 8/' -e 's/^block_size = 256/block_size = 16/' -e 's/^max_iters = 5000/max_iters = 40/' \
    -e 's/^eval_interval = 500/eval_interval = 20/' -e 's/^eval_iters = 200/eval_iters = 4/' -e 's/^n_embd = 384/n_embd = 32/' \
    -e 's/^n_head = 6/n_head = 2/' -e 's/^n_layer = 6/n_layer = 2/' -e 's/max_new_tokens=500/max_new_tokens=50/' "$SCRIPT" > run_script.py
grep -q '^max_iters = 40' run_script.py
$RUNNER run_script.py
check
