#!/usr/bin/env bash
# 1Konny/VIB-pytorch main.py (solver.py, model.py, utils.py, datasets/datasets.py): main() seeds torch / numpy alike
# and builds Solver(args); the Solver CLASS builds the model (self.toynet = ToyNet, .cuda() through utils.cuda when
# args.cuda and CUDA is there), an EMA copy (utils.Weight_EMA_Update: a second ToyNet loaded from
# self.toynet.state_dict() and updated every step FROM self.toynet.state_dict() by key), Adam + ExponentialLR (stepped
# every 2nd epoch), and the loaders in a DICT keyed by phase from the sibling datasets/datasets.py return_data(args)
# ('train': shuffle=True, drop_last=True; 'test': shuffle=False); Solver.train() (the METHOD) runs the loop on
# self.toynet, then a SECOND forward self.toynet(x, num_avg) with grad and no backward every step (multi-shot
# accuracy), prints every 100 global iterations with .data[0]; test() (every epoch) runs the EMA model over the whole
# test loader, prints, and saves checkpoints/main/best_acc.tar (toynet + EMA + optimizer state dicts) when the EMA's
# multi-shot accuracy improves; tensorboardX scalars.
# Data: MNIST stand-in, SHIM_N=1000 (1000 train / 500 test random 28x28 images).
# Run: --epoch 2 --batch_size 20 --K 16 --num_avg 4 --tensorboard true (50 steps an epoch in one process)
NAME=vib REPO=VIB-pytorch SCRIPT=main.py
ARGS=(--epoch 2 --batch_size 20 --K 16 --num_avg 4 --tensorboard true)
export SHIM_N=1000 CORPUS_ZERO_DIM_INDEX=1
SHOW_FILES="checkpoints/main"; CKPTS="checkpoints/main/*.tar"
source "$(dirname "$0")/_common.sh"
