#!/usr/bin/env bash
# uoguelph-mlrg/Cutout train.py: CIFAR10 replaced by 32 random images (shim; transforms not applied), resnet18,
# 2 epochs of batch 8 (num_workers=2 is hard-coded), logs/ and checkpoints/ made by setup as the README asks.
NAME=cutout_train REPO=Cutout SCRIPT=train.py
ARGS=(--dataset cifar10 --model resnet18 --batch_size 8 --epochs 2 --data_augmentation --cutout --length 16)
export SHIM_N=32
setup() { mkdir -p logs checkpoints; }
SHOW_FILES="logs checkpoints"; CKPTS="checkpoints/*.pt"
AFTER='echo "[run] csv rows: $(wc -l < logs/cifar10_resnet18.csv)"'
source "$(dirname "$0")/_common.sh"
