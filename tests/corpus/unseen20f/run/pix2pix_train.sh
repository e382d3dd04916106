#!/usr/bin/env bash
# mrzhu-cool/pix2pix-pytorch train.py: module-level script; U-Net generator and PatchGAN discriminator from helpers of a
# sibling module (networks.define_G/define_D -> init_net: net.to(gpu_id), the device `torch.device("cuda:0" if opt.cuda
# else "cpu")`), two Adam optimizers with two LambdaLR schedulers (get_scheduler, stepped per epoch through
# update_learning_rate), one G forward per step used by the D step (detached) and the G step (through D again), loaders from
# helpers of sibling modules (data.get_training_set -> dataset.DatasetFromFolder: listdir + PIL open, unseeded python random
# crop offsets and flips), a PSNR test pass every epoch, whole-module checkpoints torch.save(net_g) every 50 epochs after
# exists-then-os.mkdir. Facades replaced by 8 train / 4 test pairs of random 286x286 arrays written by setup() as .npy
# files named .jpg (the PIL stand-in opens them); epochs 49-50 (--epoch_count 49 --niter 50 --niter_decay 0: the epoch-50
# checkpoint is written), batch 2, ngf/ndf 8, CPU (no --cuda: device 'cpu').
NAME=pix2pix_train REPO=pix2pix-pytorch SCRIPT=train.py
ARGS=(--dataset facades --batch_size 2 --test_batch_size 2 --ngf 8 --ndf 8 --epoch_count 49 --niter 50 --niter_decay 0
      --threads 0 --seed 123)
setup() {
  "$PY" - <<'PYEOF'
import os, numpy as np
rng = np.random.RandomState(0)
for split, n in (("train", 8), ("test", 4)):
    for side in "ab":
        d = "dataset/facades/%s/%s" % (split, side)
        os.makedirs(d, exist_ok=True)
        for i in range(n):
            with open("%s/%d.jpg" % (d, i), "wb") as f:
                np.save(f, rng.randint(0, 256, (286, 286, 3)).astype(np.uint8))
PYEOF
}
SHOW_FILES="checkpoint/facades/*"; CKPTS="checkpoint/facades/*.pth"
source "$(dirname "$0")/_common.sh"
