#!/usr/bin/env bash
# karpathy/minGPT projects/chargpt/chargpt.py + mingpt/trainer.py: gpt-nano on synthetic text, 20 steps.
# SCRIPT is chargpt (original or converted); TRAINER is the trainer.py to use (default: the original from
# $SUPPORT/mingpt; point it at mingpt_trainer_ddp.py for the converted one). The package's other modules
# (model.py, utils.py) come from $SUPPORT/mingpt at the same commit.
NAME=mingpt_chargpt
source "$(dirname "$0")/_common.sh"
TRAINER="$(realpath "${TRAINER:-$SUPPORT/mingpt/mingpt/trainer.py}")"
mkdir -p mingpt
cp "$SUPPORT/mingpt/mingpt/__init__.py" "$SUPPORT/mingpt/mingpt/model.py" "$SUPPORT/mingpt/mingpt/utils.py" mingpt/
cp "$TRAINER" mingpt/trainer.py
"$PYTHON" - <<'PY'
import random
random.seed(2)
text = "O God, O God! " + "".join(random.choice("abcdefghij klmnop\n") for _ in range(20000))
open("input.txt", "w").write(text)
PY
$RUNNER "$SCRIPT" --trainer.max_iters=20 --trainer.batch_size=8 --trainer.num_workers=0 --model.model_type=gpt-nano \
    --data.block_size=16 --system.work_dir=out
check
