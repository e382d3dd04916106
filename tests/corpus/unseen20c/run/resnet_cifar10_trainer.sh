#!/usr/bin/env bash
# akamaster/pytorch_resnet_cifar10 trainer.py: CIFAR10 replaced by 32 random 3x32x32 images (shim), resnet20,
# 2 epochs of batch 8, no workers, checkpoint.th saved at epoch 1 (--save-every 1) and model.th every epoch.
NAME=resnet_cifar10_trainer REPO=pytorch_resnet_cifar10 SCRIPT=trainer.py
ARGS=(--arch resnet20 --epochs 2 -b 8 -j 0 --save-every 1 --print-freq 2)
export SHIM_N=32
SHOW_FILES="save_temp"; CKPTS="save_temp/*.th"
source "$(dirname "$0")/_common.sh"
