#!/usr/bin/env bash
# louis2889184/pytorch-adversarial-training mnist/main.py (src/ on the path: model/, attack/, utils/, argument.py):
# argparse in src/argument.py; os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu under __main__ (one GPU index for every
# process); main(): log and model folders (makedirs after an exists test), a root logger with a FileHandler
# (create_logger), Model (forward(x, _eval) switches the module to eval() / train() itself), the PGD attack object
# FastGradientSignUntargeted holding the BARE model (its perturb() runs model(x, _eval=True) under enable_grad and
# autograd.grad w.r.t. the input), tensor2cuda; a Trainer CLASS: the model built in main(), trained in
# Trainer.train() which builds the Adam optimizer itself; per step adversarial examples (perturb), model(adv, _eval=False),
# backward, step; every n_eval_step iterations: accuracies, logger.info, and Trainer.test() over the WHOLE test loader
# with adversarial examples; every n_store_image_step save_image; every n_checkpoint_step save_model (torch.save of
# model.state_dict()).
# Data: MNIST stand-in SHIM_N=32 (4 train steps of 8 an epoch; test 16 rows).
# Run: --adv_train --batch_size 8 --max_epoch 2 --k 3 --n_eval_step 4 --n_checkpoint_step 4 --n_store_image_step 4.
NAME=advtrain_mnist REPO=pytorch-adversarial-training SUBDIR=mnist SCRIPT=main.py EXTRA_SHIM=src
ARGS=(--todo train --data_root ./data --affix tiny --batch_size 8 --max_epoch 2 --k 3 --n_eval_step 4
      --n_checkpoint_step 4 --n_store_image_step 4 --adv_train --gpu 0)
export SHIM_N=32
SHOW_FILES="log/mnist_tiny/* checkpoint/mnist_tiny/*"; CKPTS="checkpoint/mnist_tiny/checkpoint_4.pth"
source "$(dirname "$0")/_common.sh"
