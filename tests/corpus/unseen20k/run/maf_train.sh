#!/usr/bin/env bash
# kamenbliznashki/normalizing_flows maf.py: argparse at import (--train / --evaluate / --generate actions); output_dir
# made after an isdir test; device 'cuda:0' if CUDA (hard-coded index); torch.manual_seed(--seed); the loaders from a
# SIBLING module (data.py fetch_dataloaders: the dataset class loaded by name through exec('from datasets.<name> import
# <NAME>') - TOY: 25000 / 5000 points drawn in code - train shuffle, test not); the model from an if/elif chain on
# --model (made / mademog / maf / mafmog / realnvp); MAF = MADE blocks + flow BatchNorm layers (running stats); the loss
# is a NON-forward method, -model.log_prob(x).mean() (log_prob calls self.forward and the base_dist property of
# registered buffers); Adam; train_and_evaluate(): per epoch train, evaluate (mean test log-prob over the whole test
# set, printed and appended to results.txt with print(file=open(..., 'a'))), torch.save of model_checkpoint.pt and
# model_state.pt every epoch and best_model_checkpoint.pt on a better test log-prob; for TOY a density / sample plot
# (matplotlib, stubbed) per epoch; settings and the model printed to results.txt.
# Run: --train --dataset POWER --model maf --n_blocks 3 --hidden_size 32 --batch_size 100 --n_epochs 2 (54 steps an epoch).
NAME=maf_train REPO=normalizing_flows SCRIPT=maf.py
ARGS=(--train --dataset POWER --model maf --n_blocks 3 --hidden_size 32 --batch_size 100 --n_epochs 2 --log_interval 20
      --output_dir ./results/tiny)
setup() {
  "$PY" - <<'PYEOF'
import os
import numpy as np
os.makedirs("data/power", exist_ok=True)
rng = np.random.RandomState(0)
np.save("data/power/data.npy", (rng.randn(6000, 8) * [1, 2, 0.5, 1, 3, 1, 2, 1] + [0, 1, 2, 3, 4, 5, 6, 7]).astype(np.float64))
PYEOF
}
SHOW_FILES="results/tiny/*"; CKPTS="results/tiny/model_checkpoint.pt results/tiny/best_model_checkpoint.pt results/tiny/model_state.pt"
source "$(dirname "$0")/_common.sh"
