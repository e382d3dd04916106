#!/usr/bin/env bash
# chenyuntc/pytorch-book Chapter12/main.py (python-fire entry `train`, AdaIN style transfer): the COCO content and
# the style ImageFolders replaced by 16 random 16x16 images each (shim, different seeds per folder), vgg19 by the
# real VGG19 layer layout at reduced width with random weights (shim); visdom/ipdb/torchnet stubbed. 5 epochs.
NAME=adain_main REPO=pytorch-book SUBDIR=Chapter12 SCRIPT=main.py
ARGS=(train --use_gpu=False --image_size=16 --batch_size=4 --epoches=5 --plot_every=1000)
export SHIM_N=16 SHIM_IMG=16 SHIM_SEED_BY_PATH=1
setup() { mkdir -p checkpoints; }
SHOW_FILES="checkpoints"; CKPTS="checkpoints/*.pth"
source "$(dirname "$0")/_common.sh"
