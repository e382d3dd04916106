#!/usr/bin/env bash
# kevinzakka/recurrent-visual-attention main.py: loaders built in main() by data_loader.py (SubsetRandomSampler
# train/valid split of MNIST), model/optimizer/ReduceLROnPlateau/early stopping in trainer.py Trainer. MNIST replaced
# by 40 random 1x28x28 images (shim; valid_size 0.2 -> 32 train / 8 valid), 2 epochs of batch 8, 4 glimpses, CPU.
# MODE=follow: the user follows the report: trainer.py and data_loader.py converted in place.
NAME=ram_main REPO=recurrent-visual-attention SCRIPT=main.py
ARGS=(--batch_size 8 --epochs 2 --valid_size 0.2 --num_glimpses 4 --num_workers 0 --use_gpu false --plot_freq 1 --print_freq 2)
export SHIM_N=40 SHIM_IMG=28
FOLLOW="${FOLLOW-trainer.py data_loader.py}"
SHOW_FILES="ckpt plots/*"; CKPTS="ckpt/*.tar"
source "$(dirname "$0")/_common.sh"
