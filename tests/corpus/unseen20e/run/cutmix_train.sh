#!/usr/bin/env bash
# clovaai/CutMix-PyTorch train.py: CIFAR10 replaced by 64 train / 32 test random images (shim), ResNet from the
# if/elif chain (--net_type resnet, depth 8 basic blocks), nn.DataParallel(model).cuda(), val loader shuffle=True,
# per-epoch checkpoint + model_best copy under runs/<expname>; 2 epochs of batch 16, cutmix off (--beta 0: rand_bbox
# uses np.int, gone from numpy 2, so cutmix itself cannot run on this numpy); np.random.rand still draws each step.
NAME=cutmix_train REPO=CutMix-PyTorch SCRIPT=train.py
ARGS=(--net_type resnet --dataset cifar10 --depth 8 --no-bottleneck --batch_size 16 --lr 0.05 --epochs 2 -j 0
      --print-freq 2 --expname t --beta 0 --cutmix_prob 0)
export SHIM_N=64
SHOW_FILES="runs/t"; CKPTS="runs/t/*.pth.tar"
source "$(dirname "$0")/_common.sh"
