#!/usr/bin/env bash
# wonbeomjang/knowledge-distillation-study train_distill.py (model.py, loss.py, utils.py): argparse at import where
# --backbone / --teacher / --loss / --dataset are DICTS of classes picked by a custom argparse Action (LookupChoices:
# the option's value is the class itself); --device 'cuda:0' when CUDA; under __main__: checkpoint/run made
# (attempt_make_dir: exists test + makedirs); teacher = config.teacher(pretrained=True, teacher=True) (its weights
# from load_url) and student = config.backbone(pretrained=True) .to(config.device); the teacher frozen
# (requires_grad False) and eval(); Adam over the student + MultiStepLR; criterion = config.loss() (loss.AT here: an
# nn.Module whose forward(image, target, student, teacher) RUNS THE STUDENT itself - student(image, True) returning
# block features - and the teacher under no_grad); run_dir = checkpoint/run/exp{len(os.listdir(run_dir)) + 1} (a
# 'next free name' computed from the folder's contents) made; wandb.init(config=vars(config)); the CIFAR-100 datasets
# and loaders built after that (train shuffle, test not); test(teacher, teacher, ...) before training; train(student,
# teacher, ...) - a separate function - steps the optimizer AND the scheduler per batch, per epoch test(student) over
# the whole test loader, best.pth on a better accuracy and last.pth every epoch (each a dict holding the state dict,
# the optimizer / scheduler states and the whole student module 'net'); after training last.pth is RELOADED into the
# student, the test set evaluated again, result.csv appended.
# CORPUS_TORCH_LOAD_FULL=1: torch.load without weights_only= loads full pickles (torch < 2.6).
# Shims: torchvision resnet18 / resnet50 tiny stand-ins (512 / 2048-channel layer4); CORPUS_LOAD_URL_DIR: load_url reads
# the teacher's weights (a seeded model.ResNet50 state dict written by setup) from weights/; wandb / psutil stand-ins.
# Data: CIFAR-100 stand-in SHIM_N=32 (4 steps of 8 an epoch; test 16).
# Run: --backbone resnet18 --teacher resnet50 --loss attention --image_size 32 --batch_size 8 --epoch 2
#      --lr_decay_epochs 1 --learning_rate 1e-3 --num_workers 0.
NAME=kdstudy_distill REPO=knowledge-distillation-study SCRIPT=train_distill.py
ARGS=(--backbone resnet18 --teacher resnet50 --loss attention --image_size 32 --batch_size 8 --epoch 2
      --lr_decay_epochs 1 --learning_rate 1e-3 --num_workers 0 --data_dir ./data)
export SHIM_N=32 CORPUS_TORCH_LOAD_FULL=1
setup() {
  export CORPUS_LOAD_URL_DIR="$PWD/weights"
  "$PY" - <<'PYEOF'
import os
import torch
import model
torch.manual_seed(0)
os.makedirs("weights", exist_ok=True)
torch.save(model.ResNet50(pretrained=False, num_classes=100).state_dict(), "weights/resnet50_cifar100_teacher.pth")
PYEOF
}
SHOW_FILES="checkpoint/run/* checkpoint/run/*/*"; CKPTS="checkpoint/run/exp1/last.pth checkpoint/run/exp1/best.pth"
source "$(dirname "$0")/_common.sh"
