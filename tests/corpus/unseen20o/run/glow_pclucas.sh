#!/usr/bin/env bash
# pclucas14/pytorch-glow train.py (invertible_layers.py, layers.py, utils.py): a module-level script; argparse; np / torch
# seeded 0 on every rank; CIFAR-10 train loader (shuffle, drop_last, num_workers 10) and test loader (drop_last); the
# model Glow_((args.batch_size, 3, 32, 32), args) - its GaussianPrior keeps args.batch_size as the SAMPLE batch shape;
# Adam + StepLR (never stepped); a DATA-DEPENDENT INIT: a third loader (init_loader, batch 512, shuffled) whose first
# batch runs through the model under no_grad in eval mode, setting every ActNorm's bias / log-scale from the data
# (ActNorm.initialized is a plain attribute); THEN nn.DataParallel(model).cuda(); --load_dir resume in utils.load_session;
# training: model(img, objective) returns (z, objective), nll from objective, clip_grad_value_ + clip_grad_norm_, manual
# warmup lr per step; every print_every steps model.module.sample() (torch.cuda.FloatTensor in GaussianPrior.reverse_)
# and save_image to ../glow/samples/cifar_Test_<epoch>_<k>.png (a fixed folder, never made); every test_every epochs a
# test pass, samples / reconstructions / the last test batch written as PNGs; every save_every epochs
# utils.save_session (exists test + makedirs of save_dir/<epoch>, model and optimizer state dicts).
# Data: CIFAR-10 stand-in SHIM_N=64 (8 steps of 8 an epoch, the init loader's one batch of 64, test 64 = 8 batches).
# Run: --batch_size 8 --depth 2 --n_levels 2 --n_epochs 2 --print_every 4 --test_every 1 --save_every 1 --n_warmup 1
# --data_dir ./data --save_dir exps. CORPUS_CUDA_FLOATTENSOR=1 (torch.cuda.FloatTensor on CPU), CORPUS_CHUNK_COPY=1 (in-place
# arithmetic on torch.chunk pieces, as old torch allowed).
NAME=glow_pclucas REPO=pytorch-glow SCRIPT=train.py
ARGS=(--batch_size 8 --depth 2 --n_levels 2 --n_epochs 2 --print_every 4 --test_every 1 --save_every 1 --n_warmup 1 --data_dir ./data --save_dir exps)
export SHIM_N=64 CORPUS_CUDA_FLOATTENSOR=1 CORPUS_CHUNK_COPY=1
SHOW_FILES="exps/* ../glow/samples/*"; CKPTS="exps/1/model.pth"
setup() { mkdir -p ../glow/samples; }
source "$(dirname "$0")/_common.sh"
