#!/usr/bin/env bash
# yanx27/Pointnet_Pointnet2_pytorch train_classification.py: ModelNet40 replaced by 32 train / 16 test random clouds of
# 160 points (x,y,z,normals as .txt, 4 of the 40 classes) written by setup; model by importlib (models/pointnet_cls.py),
# provider.py numpy augmentation, logging FileHandler, best_model.pth by test accuracy; 128 points, batch 8, 2 epochs,
# num_workers=10 hard-coded.
NAME=pointnet_cls REPO=Pointnet_Pointnet2_pytorch SCRIPT=train_classification.py
ARGS=(--batch_size 8 --epoch 2 --num_point 128 --log_dir t)
setup() {
  "$PY" - <<'PY'
import os, numpy as np
root = "data/modelnet40_normal_resampled"
names = ["c%02d" % i for i in range(40)]
os.makedirs(root, exist_ok=True)
open(os.path.join(root, "modelnet40_shape_names.txt"), "w").write("\n".join(names) + "\n")
r = np.random.RandomState(0)
for split, n in (("train", 32), ("test", 16)):
    ids = []
    for k in range(n):
        c = names[k % 4]; sid = "%s_%04d" % (c, k + (0 if split == "train" else 1000)); ids.append(sid)
        os.makedirs(os.path.join(root, c), exist_ok=True)
        np.savetxt(os.path.join(root, c, sid + ".txt"), r.randn(160, 6), delimiter=",", fmt="%.5f")
    open(os.path.join(root, "modelnet40_%s.txt" % split), "w").write("\n".join(ids) + "\n")
PY
}
SHOW_FILES="log/classification/t log/classification/t/checkpoints"; CKPTS="log/classification/t/checkpoints/*.pth"
source "$(dirname "$0")/_common.sh"
