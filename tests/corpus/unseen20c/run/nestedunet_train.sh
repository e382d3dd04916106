#!/usr/bin/env bash
# 4uiiurz1/pytorch-nested-unet train.py: dsb2018 replaced by 40 ids (empty files for glob; cv2.imread shim returns
# random 32x32 images/masks), albumentations/sklearn/pandas shimmed; NestedUNet, 3 epochs of batch 4,
# (ReduceLROnPlateau passes verbose=, which torch 2.13 rejects: default CosineAnnealingLR) early stopping 2 (decided from the val loader), best model.pth by val IoU.
NAME=nestedunet_train REPO=pytorch-nested-unet SCRIPT=train.py
ARGS=(--epochs 3 -b 4 --num_workers 0 --input_w 32 --input_h 32 --early_stopping 2 --name t)
export SHIM_IMG=32
setup() { mkdir -p inputs/dsb2018_96/images inputs/dsb2018_96/masks/0; for i in $(seq 10 49); do touch inputs/dsb2018_96/images/im$i.png inputs/dsb2018_96/masks/0/im$i.png; done; }
SHOW_FILES="models/t"; CKPTS="models/t/*.pth"
AFTER='cat models/t/log.csv'
source "$(dirname "$0")/_common.sh"
