#!/usr/bin/env bash
# ikostrikov/pytorch-flows main.py: a module-level script; the flow is assembled by an if-chain on --flow (maf: MADE +
# BatchNormFlow + Reverse blocks) into fnn.FlowSequential; the device is "cuda:0" when CUDA; training calls
# model.log_probs(data) (a method of the model that calls self(...)), never model(...); after every epoch the
# BatchNormFlow running statistics are recomputed on the WHOLE training set (momentum 0, one no-grad model(...) on
# train_loader.dataset.tensors[0]); validate() sums the loss over the validation loader; early stopping after 30 epochs
# without improvement and best_model = copy.deepcopy(model) on the best validation loss; the final test uses best_model;
# a tensorboardX SummaryWriter (stand-in) written every step; tqdm bars; utils.save_moons_plot (sample + plt.savefig into
# plots/, after try: os.makedirs except OSError) every 10 epochs. Data: MOONS, sklearn.datasets.make_moons(30000,
# noise=0.05) drawn from numpy's UNSEEDED global RNG (stand-in written as scikit-learn does), split 24000/3000/3000.
# 2 epochs, 2 blocks, batch 500, test batch 1000.
NAME=flows_main REPO=pytorch-flows SCRIPT=main.py
ARGS=(--dataset MOONS --flow maf --num-blocks 2 --epochs 2 --batch-size 500 --test-batch-size 1000 --seed 1
      --log-interval 1000)
SHOW_FILES="plots/*"
source "$(dirname "$0")/_common.sh"
