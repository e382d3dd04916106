#!/usr/bin/env bash
# tkipf/pygcn pygcn/train.py: a module-level script; argparse at import; np.random.seed / torch.manual_seed(--seed);
# load_data() (pygcn/utils.py: np.genfromtxt of ../data/cora/cora.content + cora.cites, scipy.sparse adjacency, fixed
# index ranges idx_train = range(140), idx_val = range(200, 500), idx_test = range(500, 1500)); GCN (pygcn/models.py:
# two GraphConvolution layers, dropout); Adam; .cuda() of the model and every tensor when CUDA; train(epoch): ONE
# full-graph forward per epoch (no DataLoader, no minibatch), the loss over idx_train only, validation on idx_val by a
# second forward in eval mode; test() at the end; prints only, no save.
# Data (setup): a Cora-layout graph of 1600 nodes (40 binary features, 7 classes, ~4800 citations) written to
# ../data/cora/ (the fetched snapshot lacks cora.content's blob).
# Run: --epochs 30 --hidden 16 (cd pygcn/; the package `pygcn` resolves from the repo root on PYTHONPATH).
NAME=pygcn_train REPO=pygcn SUBDIR=pygcn SCRIPT=train.py EXTRA_SHIM=..
ARGS=(--epochs 30 --hidden 16)
setup() {
  "$PY" - <<'PYEOF'
import os
import numpy as np
rng = np.random.RandomState(0)
os.makedirs("../data/cora", exist_ok=True)
n = 1600
ids = rng.choice(np.arange(10000, 99999), size=n, replace=False)
labels = ["C%d" % c for c in rng.randint(0, 7, size=n)]
with open("../data/cora/cora.content", "w") as f:
    for i in range(n):
        f.write("%d\t%s\t%s\n" % (ids[i], "\t".join(str(v) for v in (rng.rand(40) < 0.1).astype(int)), labels[i]))
with open("../data/cora/cora.cites", "w") as f:
    for _ in range(4800):
        a, b = rng.choice(n, size=2, replace=False)
        f.write("%d\t%d\n" % (ids[a], ids[b]))
PYEOF
}
source "$(dirname "$0")/_common.sh"
