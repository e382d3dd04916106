#!/usr/bin/env bash
# SaoYan/DnCNN-PyTorch train.py (dataset.py, models.py, utils.py): MODULE LEVEL sets
# os.environ["CUDA_VISIBLE_DEVICES"] = "0" (hard-coded) and parses `opt`; main(): Dataset(train=True / False) reads
# train.h5 / val.h5 and SHUFFLES ITS KEY LIST with Python's random.shuffle at construction (unseeded: the index ->
# patch map differs per process); train loader shuffle=True, num_workers=4; the model is wrapped in
# nn.DataParallel(net, device_ids=[0]).cuda(); torch UNSEEDED; per step: the noise is drawn with the batch's size
# (torch.FloatTensor(img_train.size()).normal_(...)), loss = MSELoss(size_average=False) / (2 * batch), then an EVAL-mode
# forward of the model WITH grad and no backward (PSNR_train) - every step; the LR set by hand from --milestone; per
# epoch: validation over the WHOLE val set by direct indexing (no loader; Variable(volatile=True) = grad on), a last
# forward for the image grids, tensorboardX scalars / images, and torch.save(model.state_dict(), 'logs/net.pth') - the
# DataParallel wrapper's state dict ('module.' keys: test.py loads it into nn.DataParallel).
# Data (setup()): train.h5 with 64 random 1x40x40 patches and val.h5 with 4 random 1x48x48 images (the h5py stand-in's
# pickled-dict format; --preprocess stays off).
# Run: --batchSize 16 --num_of_layers 5 --epochs 2 --milestone 1 --outf logs (4 steps an epoch in one process)
NAME=dncnn REPO=DnCNN-PyTorch SCRIPT=train.py
ARGS=(--batchSize 16 --num_of_layers 5 --epochs 2 --milestone 1 --outf logs)
SHOW_FILES="logs/net.pth"; CKPTS="logs/net.pth"
setup() {
  "$PY" - <<'PY'
import pickle, numpy as np
r = np.random.RandomState(3)
pickle.dump({str(i): r.rand(1, 40, 40).astype(np.float32) for i in range(64)}, open("train.h5", "wb"))
pickle.dump({str(i): r.rand(1, 48, 48).astype(np.float32) for i in range(4)}, open("val.h5", "wb"))
PY
}
source "$(dirname "$0")/_common.sh"
