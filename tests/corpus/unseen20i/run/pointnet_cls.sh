#!/usr/bin/env bash
# fxia22/pointnet.pytorch utils/train_classification.py: a module-level script; the seed is random.randint(1, 10000)
# (a different seed in every process) fed to random.seed / torch.manual_seed (numpy's RNG, which the dataset's point
# resampling, rotation and jitter use, is never seeded); ShapeNetDataset (pointnet/dataset.py, classification=True) train
# and test sets, BOTH loaders shuffled; try: os.makedirs(outf) except OSError; PointNetCls (pointnet/model.py, STN3d
# input transform + optional STNkd feature transform) with optional load_state_dict(torch.load(opt.model)); Adam,
# StepLR stepped at the START of each epoch; classifier.cuda() AFTER the optimizer; each step nll_loss (+
# feature_transform_regularizer(trans_feat) * 0.001), accuracy = correct / float(opt.batchSize); every 10 steps one
# test batch via next(enumerate(testdataloader, 0)) in eval mode; torch.save(classifier.state_dict(),
# outf/cls_model_<epoch>.pth) each epoch; a final whole-test-set accuracy. Data (setup): a ShapeNet-layout folder with 3
# categories, 12 train / 6 test shapes of 64 points each (.pts / .seg text files, split JSONs). 2 epochs, batch 4, 32
# points, feature transform on.
NAME=pointnet_cls REPO=pointnet.pytorch SCRIPT=utils/train_classification.py
ARGS=(--dataset shapenet_tiny --dataset_type shapenet --batchSize 4 --num_points 32 --workers 0 --nepoch 2
      --outf cls_out --feature_transform)
setup() {
  "$PY" - <<'PYEOF'
import json, os
import numpy as np
rng = np.random.RandomState(0)
root = "shapenet_tiny"
cats = [("Airplane", "02691156"), ("Bag", "02773838"), ("Cap", "02954340")]
os.makedirs(os.path.join(root, "train_test_split"), exist_ok=True)
with open(os.path.join(root, "synsetoffset2category.txt"), "w") as f:
    for name, off in cats:
        f.write("%s\t%s\n" % (name, off))
split = {"train": [], "test": []}
for ci, (name, off) in enumerate(cats):
    for d in ("points", "points_label"):
        os.makedirs(os.path.join(root, off, d), exist_ok=True)
    for j in range(6):
        uid = "%s%04d" % (off[:4], j)
        pts = rng.randn(64, 3) * (1 + ci)
        np.savetxt(os.path.join(root, off, "points", uid + ".pts"), pts, fmt="%.5f")
        np.savetxt(os.path.join(root, off, "points_label", uid + ".seg"), rng.randint(1, 3, size=64), fmt="%d")
        split["train" if j < 4 else "test"].append("shape_data/%s/%s" % (off, uid))
for s, lst in split.items():
    json.dump(lst, open(os.path.join(root, "train_test_split", "shuffled_%s_file_list.json" % s), "w"))
PYEOF
}
SHOW_FILES="cls_out/*"; CKPTS="cls_out/cls_model_1.pth"
source "$(dirname "$0")/_common.sh"
