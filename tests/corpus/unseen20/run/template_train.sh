#!/usr/bin/env bash
# victoresque/pytorch-template train.py: MNIST replaced by 256 random images (shim), 2 epochs, CPU, no tensorboard.
NAME=template_train REPO=pytorch-template
source "$(dirname "$0")/_common.sh"
export SHIM_N=256
"$PY" -c "import json; c=json.load(open('config.json')); c['n_gpu']=0; c['data_loader']['args'].update(batch_size=16,num_workers=0); c['trainer'].update(epochs=2,tensorboard=False); json.dump(c,open('config.json','w'))"
go train.py -c config.json
