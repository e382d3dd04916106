#!/usr/bin/env bash
# w86763777/pytorch-ddpm main.py: CIFAR10 replaced by 64 random images (shim), tiny UNet, T=10, 6 steps, save at step 5.
NAME=ddpm_main REPO=pytorch-ddpm
source "$(dirname "$0")/_common.sh"
export SHIM_N=64
# the original hard-codes cuda:0 (line 55); for the one-process CPU baseline only, point it at cpu
[ "$MODE" = orig ] && sed -i "s/torch.device('cuda:0')/torch.device('cpu')/" main.py
go main.py --train --ch 32 --ch_mult 1 --ch_mult 2 --attn 1 --num_res_blocks 1 --T 10 --total_steps 6 --batch_size 4 --num_workers 0 --sample_step 0 --save_step 5 --warmup 2 --logdir logs/x
