#!/usr/bin/env bash
# twtygqyy/pytorch-SRResNet main_srresnet.py (srresnet.py, dataset.py): argparse at module level; main() declares
# `global opt, model, netContent`; --cuda sets CUDA_VISIBLE_DEVICES from --gpus and raises without a GPU; the seed is
# random.randint(1, 10000) (UNSEEDED: per process) then torch.manual_seed; the train set from a HARD-CODED h5 path
# (DatasetFromHdf5 in the sibling dataset.py: data / label arrays) and a shuffled DataLoader; --vgg_loss builds a VGG19
# content network inside main() (a class defined in the function, weights downloaded - not used here); the model _NetG
# built in main(), MSELoss(size_average=False); --resume / --pretrained load a checkpoint whose "model" is a WHOLE pickled
# module; Adam; per epoch train(loader, optimizer, model, criterion, epoch) (a separate function: lr from
# adjust_learning_rate, forward, loss, step, a print every 100 iterations with loss.data[0]) and save_checkpoint(model,
# epoch): exists test + makedirs("checkpoint/"), torch.save({"epoch", "model": model}) - the WHOLE module - to
# checkpoint/model_epoch_<e>.pth.
# Data (setup): a pickled h5-layout dict (run/shim/h5py.py) with data 48 x 3 x 8 x 8 and label 48 x 3 x 32 x 32, read
# through CORPUS_H5_PATH (the script's path /path/to/your/hdf5/... does not exist here).
# Run: --batchSize 8 --nEpochs 2 (no --cuda: the script raises without a GPU under --cuda; .cuda() graded from code).
# CORPUS_ZERO_DIM_INDEX=1 (loss.data[0]); CORPUS_TORCH_LOAD_FULL=1 (whole-module checkpoints, for a --resume check).
NAME=srresnet REPO=pytorch-SRResNet SCRIPT=main_srresnet.py
ARGS=(--batchSize 8 --nEpochs 2)
export CORPUS_ZERO_DIM_INDEX=1 CORPUS_TORCH_LOAD_FULL=1
SHOW_FILES="checkpoint/*"; CKPTS=""
setup() {
  export CORPUS_H5_PATH="$PWD/tiny_srresnet_x4.h5"
  "$PY" - <<'PY'
import pickle, numpy as np
r = np.random.RandomState(0)
hr = r.rand(48, 3, 32, 32).astype(np.float32)
lr = hr.reshape(48, 3, 8, 4, 8, 4).mean(axis=(3, 5)).astype(np.float32)
pickle.dump({"data": lr, "label": hr}, open("tiny_srresnet_x4.h5", "wb"))
PY
}
source "$(dirname "$0")/_common.sh"
