#!/usr/bin/env bash
# kimhc6028/relational-networks main.py: module-level script; model chosen by if/else (RN / CNN_MLP), the optimizer is
# built INSIDE the model (model.py:127 self.optimizer) and the training step is a model method (BasicModel.train_: zero_grad,
# self(...) forward, backward, step), input buffers preallocated with the batch size (input_img/input_qst/label, main.py
# 55-57, resized per batch by tensor_data) and RN's coord_tensor sized by args.batch_size (model.py:115), batches cut by
# index slicing data[bs*i:bs*(i+1)] after an UNSEEDED random.shuffle (python random; only torch is seeded), three model steps
# per batch (ternary, binary, unary questions), tensorboard SummaryWriter (stub), a csv log, model.save_model(epoch) writes
# model/epoch_RN_XX.pth every epoch. Sort-of-CLEVR replaced by a pickle written by setup(): 40 train / 16 test random 75x75
# images with 2 questions of each kind. 2 epochs, batch 16 (5 train batches of each kind).
NAME=relnet_main REPO=relational-networks SCRIPT=main.py
ARGS=(--model RN --batch-size 16 --epochs 2 --log-interval 2 --seed 1)
setup() {
  mkdir -p data
  "$PY" - <<'PYEOF'
import pickle, numpy as np
rng = np.random.RandomState(0)
def qa(k):
    q = [rng.randint(0, 2, 18).astype(np.float64) for _ in range(k)]
    a = [int(rng.randint(0, 10)) for _ in range(k)]
    return (q, a)
def split(n):
    return [(rng.rand(75, 75, 3).astype(np.float64), qa(2), qa(2), qa(2)) for _ in range(n)]
with open("data/sort-of-clevr.pickle", "wb") as f:
    pickle.dump((split(40), split(16)), f)
PYEOF
}
SHOW_FILES="model/* *_log.csv"; CKPTS="model/*.pth"
source "$(dirname "$0")/_common.sh"
