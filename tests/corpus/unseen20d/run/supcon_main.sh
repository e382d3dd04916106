#!/usr/bin/env bash
# HobbitLong/SupContrast main_supcon.py: CIFAR10 replaced by 32 random 32x32 images (shim; TwoCropTransform applied,
# augmentations are the identity), SupConResNet resnet18, SupConLoss (losses.py), helpers in util.py
# (set_optimizer, save_model, lr schedule), tensorboard_logger stand-in; 2 epochs of batch 8, no workers, ckpt every epoch.
NAME=supcon_main REPO=SupContrast SCRIPT=main_supcon.py
ARGS=(--batch_size 8 --num_workers 0 --epochs 2 --model resnet18 --save_freq 1 --print_freq 2 --trial t)
export SHIM_N=32
SHOW_FILES="save/SupCon/cifar10_models/*"; CKPTS="save/SupCon/cifar10_models/*/*.pth"
source "$(dirname "$0")/_common.sh"
