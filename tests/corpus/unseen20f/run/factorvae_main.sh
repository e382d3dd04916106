#!/usr/bin/env bash
# 1Konny/FactorVAE main.py -> solver.py Solver (a sibling module): the Solver builds the loader (dataset.return_data, a
# helper in a sibling module: shuffle, drop_last, each item a PAIR (x1, x2 = a random other row, python random)), picks
# the VAE by if/else on the dataset (FactorVAE1 for dsprites), builds VAE + Discriminator with two Adam optimizers in
# __init__, and trains in train(): a `while not out` loop over the loader until max_iter; targets `ones`/`zeros` sized by the
# configured batch size (solver.py train()), VAE loss backward(retain_graph=True) then D loss backward, permute_dims
# (torch.randperm per latent), visdom (stand-in), checkpoints every ckpt_save_iter, latent-traverse images every viz_ta_iter.
# dSprites replaced by a 96-image npz written by setup(). 12 iterations of batch 16 (2 passes over the data).
NAME=factorvae_main REPO=FactorVAE SCRIPT=main.py
ARGS=(--dataset dsprites --dset_dir data --batch_size 16 --max_iter 12 --num_workers 0 --z_dim 6 --print_iter 4
      --viz_on true --viz_ll_iter 4 --viz_la_iter 8 --viz_ra_iter 8 --viz_ta_iter 12 --ckpt_save_iter 6 --name tiny
      --cuda true)
setup() {
  mkdir -p data/dsprites-dataset
  "$PY" - <<'PYEOF'
import numpy as np
rng = np.random.RandomState(0)
np.savez("data/dsprites-dataset/dsprites_ndarray_co1sh3sc6or40x32y32_64x64.npz",
         imgs=(rng.rand(96, 64, 64) < 0.1).astype(np.uint8))
PYEOF
}
SHOW_FILES="checkpoints/tiny/* outputs/tiny/*"; CKPTS="checkpoints/tiny/*"
source "$(dirname "$0")/_common.sh"
