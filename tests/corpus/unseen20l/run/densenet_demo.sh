#!/usr/bin/env bash
# gpleiss/efficient_densenet_pytorch demo.py: python-fire CLI (fire.Fire(demo); run/shim/fire.py stands in); demo()
# builds the CIFAR-10 datasets, an UNSEEDED train/valid split (torch.randperm before any seed: the seed is set later,
# inside train()), Subset train / valid, the DenseNet (models/densenet.py; efficient=True: torch.utils.checkpoint of
# each dense layer's bn_function), the save dir after an exists test; train() (a different function) seeds torch,
# builds the three loaders (train shuffle, valid / test not), .cuda() / DataParallel when several GPUs, SGD nesterov +
# MultiStepLR, writes results.csv, per epoch train_epoch() / test_epoch() (AverageMeter prints every batch), model.dat
# saved on a better valid error (best checkpoint), a results.csv row appended each epoch; at the end the best model is
# reloaded and tested on the test set.
# Data: CIFAR-10 stand-in SHIM_N=64 (train 64 rows: 48 train / 16 valid after the split; test 32).
# Run: --depth 10 --growth_rate 4 (one dense layer per block) --valid_size 16 --n_epochs 3 --batch_size 8 --seed 0.
NAME=densenet_demo REPO=efficient_densenet_pytorch SCRIPT=demo.py
ARGS=(--data ./data --save ./save --depth 10 --growth_rate 4 --valid_size 16 --n_epochs 3 --batch_size 8 --seed 0)
export SHIM_N=64
SHOW_FILES="save/*"; CKPTS="save/model.dat"
source "$(dirname "$0")/_common.sh"
