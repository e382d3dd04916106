#!/usr/bin/env bash
# AberHu/Knowledge-Distillation-Zoo train_kd.py: a module-level script with main(); student and teacher nets picked by
# name (network.define_tsnet, each inside nn.DataParallel on CPU too) and loaded from checkpoints (load_pretrained_model
# of utils.py); the teacher is frozen (eval, requires_grad False); kd_mode vid makes a LIST of three trainable VID
# modules (kd_losses/vid.py) whose parameters share the student's SGD (itertools.chain); nets and criterions are passed
# around in dicts to train()/test(); adjust_lr per epoch; the log goes to stdout and a FileHandler log.txt set up at
# import; save_checkpoint of utils.py writes checkpoint.pth.tar (snet AND tnet state dicts) and copies model_best.pth.tar
# on a new best top-1. Data: CIFAR10 stand-in (32 train / 16 test). Checkpoints for the student init and the teacher
# are written by setup() from the repo's own define_tsnet (random weights). 2 epochs, batch 8, resnet20 -> resnet20.
NAME=kd_vid REPO=Knowledge-Distillation-Zoo SCRIPT=train_kd.py
ARGS=(--save_root ./results --img_root ./datasets --s_init ./ckpt/s_init.pth.tar --t_model ./ckpt/t_model.pth.tar
      --print_freq 1 --epochs 2 --batch_size 8 --lr 0.1 --cuda 0 --seed 2 --note vid --data_name cifar10
      --num_class 10 --t_name resnet20 --s_name resnet20 --kd_mode vid --lambda_kd 1.0 --sf 1.0 --init_var 5.0)
export SHIM_N=32
setup() {
  "$PY" - <<'PYEOF'
import os, torch
from network import define_tsnet
os.makedirs("ckpt", exist_ok=True)
torch.manual_seed(0)
torch.save({"net": define_tsnet("resnet20", 10, cuda=False).state_dict()}, "ckpt/s_init.pth.tar")
torch.save({"net": define_tsnet("resnet20", 10, cuda=False).state_dict()}, "ckpt/t_model.pth.tar")
PYEOF
}
SHOW_FILES="results/vid/*"; CKPTS="results/vid/checkpoint.pth.tar results/vid/model_best.pth.tar"
source "$(dirname "$0")/_common.sh"
