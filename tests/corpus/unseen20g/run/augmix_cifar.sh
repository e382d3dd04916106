#!/usr/bin/env bash
# google-research/augmix cifar.py: main() builds the net by an if-chain on --model (wrn here, from third_party/), wraps it
# in torch.nn.DataParallel(net).cuda() unconditionally, and trains with train(net, train_loader, optimizer, scheduler): the
# JSD loss splits the logits of torch.cat(clean, aug1, aug2) with torch.split(logits_all, images[0].size(0)) (the batch
# sizes the split), a LambdaLR cosine schedule stepped every batch over args.epochs * len(train_loader) steps; test() divides
# summed loss and correct counts by len(test_loader.dataset); every epoch checkpoint.pth.tar (net.state_dict() of the
# DataParallel: 'module.' keys) is saved, copied to model_best.pth.tar with shutil.copyfile when the test accuracy
# improves, and a CSV log is rewritten ('w') before training and appended each epoch; after training test_c() mutates
# test_data.data for 15 corruption .npy files and prints the mean corruption error. The AugMixDataset wrapper draws the
# augmentation chain from numpy's global RNG (seeded np.random.seed(1) in main). Data: CIFAR10 stand-in (32 train / 16
# test random images); CIFAR-10-C stand-in: 15 x 8 random images + labels written by setup(); PIL ops are copies (stand-in).
# 2 epochs, batch 8, eval batch 8, WRN-10-1.
NAME=augmix_cifar REPO=augmix SCRIPT=cifar.py
ARGS=(--dataset cifar10 --model wrn --layers 10 --widen-factor 1 --epochs 2 --batch-size 8 --eval-batch-size 8
      --num-workers 0 --save ./snapshots --print-freq 1)
export SHIM_N=32
setup() {
  "$PY" - <<'PYEOF'
import os, numpy as np
rng = np.random.RandomState(2)
d = "data/cifar/CIFAR-10-C/"
os.makedirs(d, exist_ok=True)
for c in ['gaussian_noise', 'shot_noise', 'impulse_noise', 'defocus_blur', 'glass_blur', 'motion_blur', 'zoom_blur',
          'snow', 'frost', 'fog', 'brightness', 'contrast', 'elastic_transform', 'pixelate', 'jpeg_compression']:
    np.save(d + c + ".npy", rng.randint(0, 256, (8, 32, 32, 3)).astype(np.uint8))
np.save(d + "labels.npy", rng.randint(0, 10, 8).astype(np.int64))
PYEOF
}
SHOW_FILES="snapshots/*"; CKPTS="snapshots/*.pth.tar"
source "$(dirname "$0")/_common.sh"
