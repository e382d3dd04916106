#!/usr/bin/env bash
# abarankab/DDPM scripts/train_cifar.py: CIFAR10 replaced by 32 train / 16 test random images (shim, ToTensor then
# [-1,1]); GaussianDiffusion (ddpm/diffusion.py) holds the UNet and its EMA copy (ema_model, a deepcopy: in
# diffusion.parameters()); iteration-based loop over script_utils.cycle(loader); wandb stand-in. Small: UNet base 32 (GroupNorm needs 32),
# time emb 128, 20 timesteps, 6 iterations of batch 8, test loss + 10 samples and checkpoints every 3 iterations.
NAME=ddpm_cifar REPO=DDPM SCRIPT=scripts/train_cifar.py
ARGS=(--iterations 6 --batch_size 8 --log_rate 3 --checkpoint_rate 3 --log_to_wandb False --log_dir ckpt
      --project_name t --run_name r --base_channels 32 --time_emb_dim 128 --num_timesteps 20)
export SHIM_N=32
setup() { mkdir -p ckpt; }
SHOW_FILES="ckpt"; CKPTS="ckpt/*-model.pth"
source "$(dirname "$0")/_common.sh"
