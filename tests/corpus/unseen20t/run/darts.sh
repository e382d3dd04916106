#!/usr/bin/env bash
# khanrc/pt.darts search.py (config.py, architect.py, models/search_cnn.py, models/search_cells.py, models/ops.py,
# utils.py, preproc.py, genotypes.py, visualize.py): AT IMPORT `config = SearchConfig()` parses the CLI, `device =
# torch.device("cuda")`, a tensorboardX writer and a file logger under searchs/<name>/; main(): torch.cuda.set_device(
# config.gpus[0]), numpy / torch seeded alike, ONE train set (utils.get_data) SPLIT IN HALVES by index into two
# SubsetRandomSampler loaders (train_loader on [:split], valid_loader on [split:]); SearchCNNController (its own
# multi-GPU scatter / replicate path when len(device_ids) > 1) with TWO parameter sets and TWO optimizers (SGD over
# model.weights(), Adam over model.alphas() - custom methods); Architect(model) keeps a DEEP COPY v_net; train() zips the
# two loaders; per step: architect.unrolled_backward (a virtual SGD step on v_net from torch.autograd.grad of the train
# loss, the val loss's autograd.grad on v_net, a finite-difference Hessian from two more autograd.grad calls on the
# model, alpha.grad set BY HAND), alpha_optim.step(), then the weight step (model(trn_X), model.criterion, backward,
# clip_grad_norm_ over model.weights(), w_optim.step()); CosineAnnealingLR stepped first in each epoch; validate() over
# valid_loader; genotype = model.genotype() plotted (graphviz) every epoch; utils.save_checkpoint(model, ...) saves the
# WHOLE model object to searchs/<name>/checkpoint.pth.tar (+ best.pth.tar when top1 improves).
# Data: MNIST stand-in SHIM_N=64 (32 train / 32 valid by the split). Graphviz: a recording stand-in (run/shim).
# Run: --name t --dataset mnist --batch_size 8 --epochs 2 --layers 3 --init_channels 4 --workers 0 --print_freq 2 --gpus 0
NAME=darts REPO=pt.darts SCRIPT=search.py
ARGS=(--name t --dataset mnist --batch_size 8 --epochs 2 --layers 3 --init_channels 4 --workers 0 --print_freq 2 --gpus 0)
export SHIM_N=64 CORPUS_CUDA_STR_TO_CPU=1 CORPUS_CUDA_STREAM=1 CORPUS_TORCH_LOAD_FULL=1 CORPUS_VIEW_FALLBACK=1
SHOW_FILES="searchs/t searchs/t/plots"; CKPTS="searchs/t/*.pth.tar"
source "$(dirname "$0")/_common.sh"
