#!/usr/bin/env bash
# GopalakrishnanSubramani/deep_learning pytorch/wonders_of_world/finetune_convnet.py: the train/val ImageFolders
# (hard-coded absolute path) replaced by 8 random 8x8 images of 2 classes each (shim), resnet18 by a tiny conv net
# with an `fc` head (shim), zmq stubbed. The script's own 25 epochs.
NAME=wonders_finetune REPO=deep_learning SUBDIR=pytorch/wonders_of_world SCRIPT=finetune_convnet.py
ARGS=()
export SHIM_N=8 SHIM_IMG=8 SHIM_CLASSES=2
source "$(dirname "$0")/_common.sh"
