#!/usr/bin/env bash
# cs230-stanford/cs230-code-examples pytorch/vision/train.py: the SIGNS dataset synthesized by setup() as 24 train /
# 8 val random 64x64 JPEGs named "<label>_<i>.jpg" (labels 0-5), params.json set to batch 8, 2 epochs, 4 channels,
# num_workers 0, summaries every step.
NAME=cs230_vision_train REPO=cs230-code-examples SUBDIR=pytorch/vision SCRIPT=train.py
ARGS=(--data_dir data/64x64_SIGNS --model_dir experiments/base_model)
setup() {
  "$PY" - <<'PY'
import json, os
import numpy as np
from PIL import Image
rng = np.random.RandomState(0)
for split, n in (("train", 24), ("val", 8)):
    d = f"data/64x64_SIGNS/{split}_signs"; os.makedirs(d, exist_ok=True)
    for i in range(n):
        Image.fromarray(rng.randint(0, 256, (64, 64, 3)).astype(np.uint8)).save(f"{d}/{i % 6}_{split}{i}.jpg")
p = "experiments/base_model/params.json"; c = json.load(open(p))
c.update(batch_size=8, num_epochs=2, num_channels=4, num_workers=0, save_summary_steps=1)
json.dump(c, open(p, "w"))
PY
}
SHOW_FILES="experiments/base_model"; CKPTS="experiments/base_model/*.pth.tar"
AFTER='echo "[run] train.log lines: $(wc -l < experiments/base_model/train.log)"; grep -c "Epoch 1/2" experiments/base_model/train.log'
source "$(dirname "$0")/_common.sh"
