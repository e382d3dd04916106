#!/usr/bin/env bash
# yjn870/SRCNN-pytorch train.py: everything under `if __name__ == '__main__'`; argparse; outputs_dir/x{scale} made after
# an exists test; cudnn.benchmark; device = 'cuda:0' if CUDA else 'cpu' (hard-coded index); torch.manual_seed(seed);
# SRCNN (models.py) with Adam over THREE param groups read from model.conv1 / conv2 / conv3 (conv3 at lr * 0.1);
# TrainDataset / EvalDataset (datasets.py) read an h5 file per item; train loader shuffle + drop_last + num_workers;
# eval loader batch 1; per epoch: tqdm total = len(ds) - len(ds) % batch, torch.save(model.state_dict()) to
# epoch_{n}.pth, PSNR over the whole eval set, best_weights = copy.deepcopy(model.state_dict()) on a better PSNR; at the
# end best.pth from best_weights.
# Data (setup): ../tiny_train.h5 (32 patches 'lr'/'hr' 1x33x33) and ../tiny_eval.h5 (4 images 'lr'/'hr' groups keyed
# '0'..'3', 24x24), pickles read by the h5py stand-in (run/shim/h5py.py).
# Run: --scale 3 --batch-size 4 --num-epochs 3 --num-workers 0 (8 batches an epoch).
NAME=srcnn_train REPO=SRCNN-pytorch SCRIPT=train.py
ARGS=(--train-file ../tiny_train.h5 --eval-file ../tiny_eval.h5 --outputs-dir ./outputs --scale 3 --batch-size 4
      --num-epochs 3 --num-workers 0 --seed 123)
setup() {
  "$PY" - <<'PYEOF'
import pickle
import numpy as np
rng = np.random.RandomState(0)
hr = rng.randint(0, 256, size=(32, 33, 33)).astype(np.float32)
lr = np.clip(hr + rng.randn(32, 33, 33) * 20, 0, 255).astype(np.float32)
pickle.dump({"lr": lr, "hr": hr}, open("../tiny_train.h5", "wb"))
ev = {"lr": {}, "hr": {}}
for i in range(4):
    h = rng.randint(0, 256, size=(24, 24)).astype(np.float32)
    ev["hr"][str(i)] = h
    ev["lr"][str(i)] = np.clip(h + rng.randn(24, 24) * 20, 0, 255).astype(np.float32)
pickle.dump(ev, open("../tiny_eval.h5", "wb"))
PYEOF
}
SHOW_FILES="outputs/x3/*"; CKPTS="outputs/x3/best.pth outputs/x3/epoch_2.pth"
source "$(dirname "$0")/_common.sh"
