#!/usr/bin/env bash
# YannDubs/disentangling-vae main.py (loss factor): main() builds the loader by dataset name (utils/datasets.py
# get_dataloaders, MNIST resized to 32x32), the model by name (disvae/models/vae.py init_specific_model 'Burgess'), an
# Adam, the loss by name (disvae/models/losses.py get_loss_f): FactorKLoss OWNS a Discriminator and its own Adam;
# args.batch_size is doubled for factor; the Trainer class (disvae/training.py) runs the epochs and calls
# loss_f.call_optimize(data, model, optimizer, storer), which splits each batch in two halves, does the VAE forward on
# the first half, vae_loss.backward(retain_graph=True), model.sample_latent (a non-forward method) on the second half,
# the discriminator loss with ones/zeros sized by half the batch, then the VAE and discriminator steps; the Trainer
# writes train_losses.log (a LossesLogger file), checkpoints through save_model (modelIO: model.pt + specs.json) and a
# training gif (GifTraversalsTraining, imageio) each epoch; after training load_model + Evaluator (the whole train set
# again, unshuffled) writes test_losses.log / metrics. Data: MNIST stand-in (32 rows, resized 28 -> 32). 2 epochs,
# batch 4 (8 after doubling).
NAME=disvae_factor REPO=disentangling-vae SCRIPT=main.py
ARGS=(factor_tiny -d mnist -l factor -m Burgess -z 4 -e 2 -b 4 --lr 5e-4 --lr-disc 5e-5 --checkpoint-every 1
      --no-progress-bar --no-cuda -s 1234 --eval-batchsize 8)
export SHIM_N=32 CORPUS_NUMPY_ALIASES=1
SHOW_FILES="results/factor_tiny/*"; CKPTS="results/factor_tiny/model.pt results/factor_tiny/model-*.pt"
source "$(dirname "$0")/_common.sh"
