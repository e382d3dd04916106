#!/usr/bin/env bash
# yunjey/stargan main.py on RaFD: the ImageFolder replaced by 16 random 16x16 images of 2 classes (shim); a small
# G/D (conv dim 8, 1 residual block, 2 strided D convs), 6 iterations of batch 4, n_critic 2, no tensorboard.
NAME=stargan_main REPO=stargan SCRIPT=main.py
ARGS=(--dataset RaFD --c_dim 2 --image_size 16 --rafd_crop_size 16 --g_conv_dim 8 --d_conv_dim 8 --g_repeat_num 1
      --d_repeat_num 2 --batch_size 4 --num_iters 6 --num_iters_decay 3 --n_critic 2 --log_step 2 --sample_step 3
      --model_save_step 3 --lr_update_step 2 --use_tensorboard false --num_workers 0)
export SHIM_N=16 SHIM_IMG=16 SHIM_CLASSES=2
SHOW_FILES="stargan/models stargan/samples"; CKPTS="stargan/models/*.ckpt"
FOLLOW="${FOLLOW-solver.py data_loader.py}"
source "$(dirname "$0")/_common.sh"
