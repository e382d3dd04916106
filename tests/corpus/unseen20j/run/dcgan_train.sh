#!/usr/bin/env bash
# w86763777/pytorch-gan-collections dcgan.py: absl flags/app; module-level `device = torch.device('cuda:0')` (hard-coded);
# net_G / net_D / loss picked from dicts by --arch / --loss; train(): CIFAR10 loader (shuffle, drop_last), two Adams and
# two LambdaLR schedules, os.makedirs(logdir/sample) WITHOUT exist_ok, tensorboardX writer, a fixed sample_z batch,
# flagfile.txt; one real batch by next(iter(dataloader)) for a real-sample grid; then `looper = infiniteloop(dataloader)`
# (source/utils.py: a generator `while True: for x, _ in iter(dataloader): yield x`) and a step loop: D steps on
# next(looper) with z = randn(FLAGS.batch_size, z_dim) fakes, a G step with z = randn(FLAGS.batch_size * 2, z_dim);
# samples save_image'd every sample_step; model.pt (net_G/net_D/optims/scheds state_dicts) every eval_step; Inception/FID
# only with --record (off here: --norecord). set_seed(0) seeds random/numpy/torch.
# Run: CIFAR10 stand-in 32 images, batch 4 (8 batches an epoch), 12 steps (the generator wraps once), samples every 5,
# model.pt every 6. torch.device('cuda:0') is the CPU here (CORPUS_CUDA_DEVICE_AS_CPU; the device item is graded by code).
NAME=dcgan_train REPO=pytorch-gan-collections SCRIPT=dcgan.py
ARGS=(--total_steps 12 --batch_size 4 --sample_step 5 --eval_step 6 --sample_size 8 --norecord --logdir ./logs/tiny)
export SHIM_N=32 CORPUS_CUDA_DEVICE_AS_CPU=1
SHOW_FILES="logs/tiny/* logs/tiny/sample/*"; CKPTS="logs/tiny/model.pt"
source "$(dirname "$0")/_common.sh"
