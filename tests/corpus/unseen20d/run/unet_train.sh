#!/usr/bin/env bash
# milesial/Pytorch-UNet train.py: 40 random 32x32 RGB images and 0/255 masks written by setup as .npy (load_image reads
# .npy through Image.fromarray; PIL and wandb are stand-ins), scale 0.5 (16x16), 20% validation (random_split seed 0:
# 32 train / 8 val), batch 4, 2 epochs; evaluation + ReduceLROnPlateau every step (division_step 32 // 20 = 1),
# num_workers=os.cpu_count() (2 here), a checkpoint every epoch.
NAME=unet_train REPO=Pytorch-UNet SCRIPT=train.py
ARGS=(--epochs 2 --batch-size 4 --scale 0.5 --validation 20 --classes 2)
setup() {
  "$PY" - <<'PY'
import os, numpy as np
os.makedirs("data/imgs", exist_ok=True); os.makedirs("data/masks", exist_ok=True)
r = np.random.RandomState(0)
for i in range(40):
    np.save("data/imgs/im%02d.npy" % i, r.randint(0, 256, size=(32, 32, 3)).astype(np.uint8))
    np.save("data/masks/im%02d_mask.npy" % i, (r.rand(32, 32) > 0.5).astype(np.uint8) * 255)
PY
}
SHOW_FILES="checkpoints"; CKPTS="checkpoints/*.pth"
source "$(dirname "$0")/_common.sh"
