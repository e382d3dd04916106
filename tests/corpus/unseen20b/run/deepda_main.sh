#!/usr/bin/env bash
# jindongwang/transferlearning code/DeepDA/main.py (DANN: --transfer_loss adv), iteration-based training through the
# sibling InfiniteDataLoader: the source/target ImageFolders replaced by 16 random 16x16 images of 2 classes each
# (shim, seeded by folder name), resnet18 by a tiny ResNet-shaped net (shim). 3 epochs x 2 iterations, early stop 1.
NAME=deepda_main REPO=transferlearning SUBDIR=code/DeepDA SCRIPT=main.py
ARGS=(--data_dir data --src_domain amazon --tgt_domain webcam --backbone resnet18 --transfer_loss adv --batch_size 8
      --n_epoch 3 --n_iter_per_epoch 2 --early_stop 1 --num_workers 0 --seed 1)
export SHIM_N=16 SHIM_IMG=16 SHIM_CLASSES=2 SHIM_SEED_BY_PATH=1
SHOW_FILES="train_log.csv"
source "$(dirname "$0")/_common.sh"
