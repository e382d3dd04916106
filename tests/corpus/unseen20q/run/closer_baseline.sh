#!/usr/bin/env bash
# wyharveychen/CloserLookFewShot train.py (io_utils.py, backbone.py, methods/baselinetrain.py, data/datamgr.py,
# data/dataset.py, configs.py): __main__ seeds numpy only (np.random.seed(10); torch UNSEEDED: the model's init differs
# per process); the backbone from io_utils.model_dict (a dict of constructors) and the method from an if/elif chain
# (baseline / baseline++ / protonet / ... ; baseline++ here: BaselineTrain with a WeightNorm'd distLinear head);
# loaders built in the sibling data/datamgr.py (SimpleDataManager.get_data_loader: shuffle, num_workers=12); the
# model's own forward moves x to .cuda(); model.cuda(); training in a SEPARATE train() function that calls
# model.train_loop(epoch, base_loader, optimizer) - a METHOD of the model class in methods/baselinetrain.py that
# iterates the loader, calls self.forward_loss -> self.forward, backward, step; the Adam optimizer is made inside
# train(); test_loop returns -1 for baseline (no best save); makedirs of checkpoint_dir after isdir tests (twice);
# torch.save({'epoch', 'state': model.state_dict()}) every save_freq epochs and at the last epoch; --resume scans
# checkpoint_dir with glob; configs.save_dir is a hard-coded absolute path (setup() points it at ./).
# Data: setup() writes 48 84x84x3 uint8 .npy images (8 classes x 6) and filelists/miniImagenet/{base,val}.json.
# Run: --dataset miniImagenet --model Conv4 --method baseline++ --num_classes 8 --stop_epoch 2 --save_freq 1
NAME=closer_baseline REPO=CloserLookFewShot SCRIPT=train.py
ARGS=(--dataset miniImagenet --model Conv4 --method baseline++ --num_classes 8 --stop_epoch 2 --save_freq 1)
SHOW_FILES="checkpoints/miniImagenet/Conv4_baseline++/*"; CKPTS="checkpoints/miniImagenet/Conv4_baseline++/1.tar"
setup() {
  sed -i "s#^save_dir *=.*#save_dir = './'#" configs.py
  "$PY" - <<'PY'
import json, os, numpy as np
r = np.random.RandomState(3); os.makedirs("imgs", exist_ok=True)
names, labels = [], []
for c in range(8):
    for k in range(6):
        p = "imgs/c%d_%d.npy" % (c, k); np.save(p, r.randint(0, 255, (84, 84, 3)).astype(np.uint8))
        names.append(p); labels.append(c)
for f in ("base", "val"):
    json.dump({"label_names": [str(c) for c in range(8)], "image_names": names, "image_labels": labels},
              open("filelists/miniImagenet/%s.json" % f, "w"))
PY
}
source "$(dirname "$0")/_common.sh"
