#!/usr/bin/env bash
# karpathy/pytorch-made run.py: binarized MNIST replaced by an .npz written by setup (train 400 / valid 200 rows of 784
# random bits); MADE (made.py) with 2 masks resampled by model.update_masks() every 2 steps (its own seeded
# np.random.RandomState), batches cut by index slicing with a hard-coded B = 100 (loss summed over the batch / B),
# 100 epochs hard-coded (4 steps each here), StepLR.step(epoch), test on 5 batches each epoch; no checkpoint.
NAME=made_run REPO=pytorch-made SCRIPT=run.py
ARGS=(-d bmnist.npz -q 64 -n 2 -r 2 -s 1)
setup() {
  "$PY" - <<'PY'
import numpy as np
r = np.random.RandomState(0)
np.savez("bmnist.npz", train_data=(r.rand(400, 784) < 0.3).astype(np.float32),
         valid_data=(r.rand(200, 784) < 0.3).astype(np.float32))
PY
}
source "$(dirname "$0")/_common.sh"
