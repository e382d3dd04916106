#!/usr/bin/env bash
# heykeetae/Self-Attention-GAN main.py (Trainer in trainer.py, Data_Loader in data_loader.py): CelebA ImageFolder
# replaced by 16 random 64x64 images (shim), conv dims 64 (Self_Attn sizes are fixed), z 16, 6 generator steps of batch 4, wgan-gp, samples every
# 3 steps, G/D saved every epoch (model_save_step 1.0 x steps per epoch). --log_step 100: the log line indexes a
# 0-dim tensor (.data[0]), which modern torch rejects, so it is kept out of the run.
# MODE=follow: the user follows the report ("convert the file that holds the training loop"): trainer.py and data_loader.py in place.
NAME=sagan_main REPO=Self-Attention-GAN SCRIPT=main.py
ARGS=(--dataset celeb --imsize 64 --batch_size 4 --total_step 6 --log_step 100 --sample_step 3 --model_save_step 1 --z_dim 16 --version t)
export SHIM_N=16 SHIM_IMG=64
FOLLOW="${FOLLOW-trainer.py data_loader.py}"
SHOW_FILES="models/t samples/t"; CKPTS="models/t/*.pth"
source "$(dirname "$0")/_common.sh"
