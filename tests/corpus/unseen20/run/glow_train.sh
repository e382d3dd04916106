#!/usr/bin/env bash
# rosinality/glow-pytorch train.py: ImageFolder replaced by random 8x8 images (shim), 6 iterations.
NAME=glow_train REPO=glow-pytorch
source "$(dirname "$0")/_common.sh"
export SHIM_N=32 SHIM_IMG=8
mkdir -p sample checkpoint
go train.py --batch 4 --iter 6 --n_flow 2 --n_block 2 --img_size 8 --n_sample 2 imgs
