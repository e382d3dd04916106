#!/usr/bin/env bash
# imirzadeh/Teacher-Assistant-Knowledge-Distillation train.py (model_factory.py, plain_cnn_cifar.py, resnet_cifar.py,
# data_loader.py): __main__ reads its hyper-parameters from nni.get_next_parameter() (the stand-in: seed 31, T 4,
# lambda 0.5) and seeds torch alike; BOTH models come from a name REGISTRY in the sibling model_factory
# (create_cnn_model: 'resnetN' -> resnet_book, 'planeN' -> ConvNetMaker(plane_cifar10_book[N])) with `.cuda()` inside
# when --cuda; training is a METHOD of a class (TrainManager.train() on self.student, the optimizer built in __init__);
# the loaders come from get_cifar() in the sibling data_loader.py with batch_size=128 HARD-CODED there (the script's
# --batch-size is parsed and never used), shuffle=True / False, num_workers=2, pin_memory; TWO phases in one run: the
# TEACHER is trained first by one TrainManager (no teacher), its best checkpoint '<teacher>_None_best.pth.tar' (val acc
# improved) is written and then RELOADED from disk into the bare teacher model (load_checkpoint: torch.load +
# load_state_dict of 'model_state_dict'); then fresh loaders and a second TrainManager train the STUDENT with the
# teacher's outputs in the loss (teacher in eval mode but its forward WITH grad); device 'cuda' string (--cuda 1);
# per-epoch LR set by hand; val accuracy on the whole test loader decides the best save.
# Run: --dataset cifar10 --teacher plane4 --student plane2 --epochs 2 --cuda 1 (SHIM_N=256: 2 train batches of 128
#      per epoch in one process, 128 test images)
NAME=takd REPO=Teacher-Assistant-Knowledge-Distillation SCRIPT=train.py
ARGS=(--dataset cifar10 --teacher plane4 --student plane2 --epochs 2 --cuda 1)
export SHIM_N=256 CORPUS_CUDA_DEVICE_AS_CPU=1 CORPUS_CUDA_STR_TO_CPU=1
SHOW_FILES="*.pth.tar"; CKPTS="plane4_None_best.pth.tar plane2_None_best.pth.tar"
source "$(dirname "$0")/_common.sh"
