#!/usr/bin/env bash
# ritheshkumar95/pytorch-vqvae vqvae.py: CIFAR10 replaced by 32 random 3x32x32 images (shim), hidden 16, k 32,
# 2 epochs of batch 8, no workers, CPU; models/<output_folder>/best.pt and model_<epoch>.pt.
NAME=vqvae_main REPO=pytorch-vqvae SCRIPT=vqvae.py
ARGS=(--data-folder data --dataset cifar10 --hidden-size 16 --k 32 --batch-size 8 --num-epochs 2 --num-workers 0 --output-folder t)
export SHIM_N=32
SHOW_FILES="models/t"; CKPTS="models/t/*.pt"
source "$(dirname "$0")/_common.sh"
