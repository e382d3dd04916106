#!/usr/bin/env bash
# HobbitLong/RepDistiller train_student.py, --distill hint (student resnet8 + ConvReg regressor trained, resnet8
# teacher frozen): CIFAR-100 replaced by 32 random images (shim CIFAR100, subclassable); tensorboard_logger stubbed;
# the teacher checkpoint is made by setup() with the repo's own resnet8 (random weights). 2 epochs of batch 8.
NAME=repdistiller_student REPO=RepDistiller SCRIPT=train_student.py
ARGS=(--path_t ./save/models/resnet8_vanilla/ckpt_teacher.pth --model_s resnet8 --distill hint -a 0 -b 100
      --epochs 2 --batch_size 8 --num_workers 0 --print_freq 1 --save_freq 1)
export SHIM_N=32
setup() {
  mkdir -p save/models/resnet8_vanilla
  "$PY" -c "import torch; from models import model_dict; torch.manual_seed(0); torch.save({'model': model_dict['resnet8'](num_classes=100).state_dict()}, 'save/models/resnet8_vanilla/ckpt_teacher.pth')"
}
SHOW_FILES="save/student_model/*"; CKPTS="save/student_model/*/*.pth"
source "$(dirname "$0")/_common.sh"
