#!/usr/bin/env bash
# kaidic/LDAM-DRW cifar_train.py: CIFAR10 replaced by 200 train / 100 test random images (shim), made long-tailed by
# IMBALANCECIFAR10 (np.random.seed(rand_number), imb_factor 0.1: 20..2 images per class, 76 in all); resnet32 from
# models.__dict__[arch] (plain Linear: --loss_type CE; LDAMLoss builds torch.cuda.FloatTensor, impossible on this CPU-only torch), nn.DataParallel(model).cuda(), DRW rule (criterion rebuilt
# every epoch with class weights), csv logs + args.txt + tensorboardX under log/<store_name>, ckpt.pth.tar (+ best)
# under checkpoint/<store_name>; sklearn confusion_matrix (stand-in). 2 epochs of batch 16, --seed 0.
NAME=ldam_cifar REPO=LDAM-DRW SCRIPT=cifar_train.py
ARGS=(--dataset cifar10 --arch resnet32 --loss_type CE --train_rule DRW --imb_factor 0.1 --epochs 2 -b 16 -j 0
      --print-freq 2 --seed 0 --lr 0.05)
export SHIM_N=200
SHOW_FILES="log/* checkpoint/*"; CKPTS="checkpoint/*/*.pth.tar"
source "$(dirname "$0")/_common.sh"
