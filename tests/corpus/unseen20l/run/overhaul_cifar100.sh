#!/usr/bin/env bash
# clovaai/overhaul-distillation CIFAR-100/train_with_distillation.py: a module-level script; argparse; CIFAR-100
# loaders at import (train shuffle, test not, num_workers 4); teacher and student from an if/elif chain on
# --paper_setting (load_settings.py: the teacher's weights read from data_path); Distiller (distiller.py) holds the
# teacher t_net, the student s_net, the feature Connectors (the only extra trained modules) and margin buffers; d_net's
# forward runs the teacher (in TRAIN mode, its BN running stats move; its outputs detached or unused: the teacher's
# parameters get no gradient and are in no optimizer) and the student; torch.cuda.set_device(0) + .cuda() when CUDA;
# test(t_net) before training; the SGD optimizer over s_net + Connectors is (re)built inside the epoch loop at epoch 0,
# epochs/2 and 3*epochs/4 (`epoch is 0`) and reached through `global optimizer` in train_with_distill(); per epoch
# train_with_distill(d_net) then test(s_net) (the bare student); prints only, no checkpoint.
# Data: CIFAR-100 stand-in SHIM_N=32 (2 train steps of 16 an epoch; test 16); the teacher's weight file
# data/WRN28-4_21.09.pt ({'model': state_dict} of a seeded WideResNet-28-4) written by setup.
# Run: --paper_setting c (WRN-28-4 -> WRN-16-2) --epochs 2 --batch_size 16.
NAME=overhaul_cifar100 REPO=overhaul-distillation SUBDIR=CIFAR-100 SCRIPT=train_with_distillation.py
ARGS=(--data_path ./data --paper_setting c --epochs 2 --batch_size 16)
export SHIM_N=32
setup() {
  "$PY" - <<'PYEOF'
import os
import torch
import models.WideResNet as WRN
torch.manual_seed(0)
os.makedirs("data", exist_ok=True)
torch.save({"model": WRN.WideResNet(depth=28, widen_factor=4, num_classes=100).state_dict()}, "data/WRN28-4_21.09.pt")
PYEOF
}
source "$(dirname "$0")/_common.sh"
