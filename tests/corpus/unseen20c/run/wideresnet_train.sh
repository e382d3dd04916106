#!/usr/bin/env bash
# xternalz/WideResNet-pytorch train.py: CIFAR10 (picked by datasets.__dict__[name.upper()]) replaced by 32 random
# images (shim), WRN-10-1, 2 epochs of batch 8 (num_workers=1 hard-coded), checkpoints in runs/t/.
NAME=wideresnet_train REPO=WideResNet-pytorch SCRIPT=train.py
ARGS=(--epochs 2 -b 8 --layers 10 --widen-factor 1 --print-freq 2 --name t)
export SHIM_N=32
SHOW_FILES="runs/t"; CKPTS="runs/t/*.pth.tar"
source "$(dirname "$0")/_common.sh"
