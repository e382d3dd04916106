#!/usr/bin/env bash
# nadavbh12/VQ-VAE main.py: the model class picked by name from a dict of dicts (models[args.dataset][args.model] ->
# vq_vae/auto_encoder.py VQ_CVAE), dataset class / args / transforms by name from dicts; setup_logging_from_args
# (vq_vae/util.py) makes results/<save-name> (rmtree if it exists, then makedirs), a log.txt FileHandler + console, and
# args.json; a torch.utils.tensorboard SummaryWriter there; train(): forward model(data), the loss from a NON-forward
# model method model.loss_function(data, *outputs) and model.latest_losses() (module state), reconstruction images on
# the last batch, writer.add_histogram of outputs[3] and model.print_atom_hist; epoch losses divided by
# len(dataset) / batch_size; test_net(): the whole test set, on its first batch save_reconstructed_images +
# save_checkpoint (checkpoints/model_<epoch>.pth, os.makedirs exist_ok); writer.add_scalars per epoch, StepLR.
# Data: CIFAR10 stand-in (16 train / 8 test images). 2 epochs, batch 4, hidden 16, k 8.
NAME=vqvae_main REPO=VQ-VAE SCRIPT=main.py
ARGS=(--model vqvae --dataset cifar10 --data-dir data --hidden 16 -k 8 --batch-size 4 --epochs 2 --no-cuda
      --log-interval 2 --results-dir results --save-name tiny --seed 1)
export SHIM_N=16
SHOW_FILES="results/tiny/* results/tiny/checkpoints/*"; CKPTS="results/tiny/checkpoints/model_2.pth"
source "$(dirname "$0")/_common.sh"
