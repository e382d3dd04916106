#!/usr/bin/env bash
# locuslab/TCN TCN/adding_problem/add_test.py: module-level script, synthetic data made by utils.data_generator
# (50000 train / 1000 test rows, hard-coded; numpy positions unseeded), batches by index slicing (no DataLoader),
# optimizer by getattr(optim, args.optim). Small: seq_len 20, 2 levels of 8 channels, batch 1000, 2 epochs (50 steps each).
NAME=tcn_add REPO=TCN SUBDIR=TCN/adding_problem SCRIPT=add_test.py
ARGS=(--seq_len 20 --levels 2 --nhid 8 --ksize 3 --batch_size 1000 --epochs 2 --log-interval 10)
source "$(dirname "$0")/_common.sh"
