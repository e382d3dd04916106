#!/usr/bin/env bash
# WangYueFt/dgcnn pytorch/main.py (data.py, model.py, util.py): __main__ parses args, _init_() makes
# checkpoints/<exp>/models and os.system('cp main.py ... .backup') four files, opens an IOStream log
# (checkpoints/<exp>/run.log, append), torch seeded (numpy NOT seeded), then train(args, io): BOTH loaders built
# inside train() from ModelNet40 (data.py: h5 files under data/modelnet40_ply_hdf5_2048; train items get a random
# scale / shift and a point shuffle from numpy's global RNG in __getitem__, num_workers=8); train loader
# shuffle=True, drop_last=True; TEST loader shuffle=True, drop_last=False; the model from an if / elif chain on
# args.model (pointnet / dgcnn), .to(device), then nn.DataParallel(model); model.py's get_graph_feature builds an
# index with device=torch.device('cuda') (the CURRENT cuda device); SGD (lr * 100) + CosineAnnealingLR stepped at the
# top of each epoch; per epoch: train metrics (sklearn accuracy / balanced accuracy over the epoch's predictions), test
# over the whole test loader, and torch.save(model.state_dict(), 'checkpoints/<exp>/models/model.t7') when test_acc >=
# best - the DataParallel wrapper's state dict ('module.' keys: test() loads it into nn.DataParallel(DGCNN)).
# Data (setup()): data/modelnet40_ply_hdf5_2048/ply_data_train0.h5 (48 clouds of 64 points) and ply_data_test0.h5
# (16 clouds) in the h5py stand-in's pickled-dict format, labels in 0..3.
# Run: --exp_name t --model dgcnn --num_points 64 --k 4 --emb_dims 32 --batch_size 8 --test_batch_size 8 --epochs 2
NAME=dgcnn REPO=dgcnn SUBDIR=pytorch SCRIPT=main.py
ARGS=(--exp_name t --model dgcnn --num_points 64 --k 4 --emb_dims 32 --batch_size 8 --test_batch_size 8 --epochs 2)
export CORPUS_CUDA_DEVICE_AS_CPU=1 CORPUS_CUDA_STR_TO_CPU=1
SHOW_FILES="checkpoints/t checkpoints/t/models"; CKPTS="checkpoints/t/models/model.t7"
setup() {
  "$PY" - <<'PY'
import os, pickle, numpy as np
r = np.random.RandomState(7)
d = "data/modelnet40_ply_hdf5_2048"
os.makedirs(d, exist_ok=True)
for part, n in (("train", 48), ("test", 16)):
    pickle.dump({"data": r.randn(n, 64, 3).astype(np.float32), "label": r.randint(0, 4, size=(n, 1)).astype(np.int64)},
                open(os.path.join(d, "ply_data_%s0.h5" % part), "wb"))
PY
}
source "$(dirname "$0")/_common.sh"
