#!/usr/bin/env bash
# Diego999/pyGAT train.py: full-batch GAT on a graph (no DataLoader). Cora replaced by a random graph written by setup():
# 1500 nodes (idx_train/val/test are hard-coded ranges 0-140, 200-500, 500-1500 in utils.load_data), 32 binary features,
# 4 classes, ~3000 edges, read through np.genfromtxt + the scipy.sparse stand-in (dense). Early stopping on the validation
# loss with --patience, a checkpoint '<epoch>.pkl' every epoch in the working dir and a glob over '*.pkl' that removes the
# non-best ones every epoch; the best one is reloaded for compute_test. at most 20 epochs, lr 0.05, hidden 8, 2 heads, patience 3 (the original stops early after epoch 6, best epoch 2).
NAME=pygat_train REPO=pyGAT SCRIPT=train.py
ARGS=(--epochs 20 --hidden 8 --nb_heads 2 --patience 3 --lr 0.05 --seed 72)
setup() {
  mkdir -p data/cora
  "$PY" - <<'PYEOF'
import numpy as np
rng = np.random.RandomState(0)
n, f = 1500, 32
ids = rng.permutation(100000)[:n] + 1000
labels = rng.randint(0, 4, n)
feat = (rng.rand(n, f) < 0.2).astype(int)
with open("data/cora/cora.content", "w") as fh:
    for i in range(n):
        fh.write("\t".join([str(ids[i])] + [str(v) for v in feat[i]] + ["class%d" % labels[i]]) + "\n")
e = rng.randint(0, n, size=(3000, 2))
with open("data/cora/cora.cites", "w") as fh:
    for a, b in e:
        fh.write("%d\t%d\n" % (ids[a], ids[b]))
PYEOF
}
SHOW_FILES="*.pkl"; CKPTS="*.pkl"
source "$(dirname "$0")/_common.sh"
