#!/usr/bin/env bash
# szagoruyko/wide-residual-networks pytorch/main.py (resnet.py, utils.py; torchnet 0.0.4 and nested_dict from
# /work/corpus-unseen20q/_deps): NO nn.Module - resnet() returns a FUNCTIONAL model f(input, params, mode) and a flat
# dict of tensors `params` (conv / bn weights requiring grad, BN running stats as plain tensors in the same dict), made
# .cuda() by utils.cast; the training loop is torchnet's Engine (in a library): engine.train(h, train_loader, epochs,
# optimizer) with hooks closed over main()'s locals - h(sample) runs utils.data_parallel(f, inputs, params, mode,
# range(ngpu)) and returns the loss, the engine calls optimizer.step(closure) (the backward inside the closure);
# on_start_epoch replaces state['iterator'] with tqdm(train_loader) and, when the epoch is in --epoch_step, REPLACES
# state['optimizer'] with a new SGD at a decayed lr; on_end_epoch runs engine.test(h, test_loader) and log(): torch.save
# of the params dict + optimizer state to <save>/model.pt7 every epoch and a log.txt append; torch seeded --seed alike
# on every rank; CUDA_VISIBLE_DEVICES set from --gpu_id in-process; os.mkdir(opt.save) after an exists test; the
# datasets chosen by getattr(datasets, opt.dataset); --resume copies saved tensors into params.
# Data: CIFAR10 stand-in SHIM_N=64 (train 64 = 4 steps of 16; test 64 = 4 batches).
# Run: --depth 10 --width 1 --batch_size 16 --epochs 2 --nthread 0 --epoch_step [2] --save run1
NAME=wrn_tnt REPO=wide-residual-networks SUBDIR=pytorch SCRIPT=main.py
ARGS=(--depth 10 --width 1 --batch_size 16 --epochs 2 --nthread 0 --epoch_step "[2]" --save run1)
export SHIM_N=64
EXTRA_SHIM=/work/corpus-unseen20q/_deps
SHOW_FILES="run1/*"; CKPTS="run1/model.pt7"
source "$(dirname "$0")/_common.sh"
