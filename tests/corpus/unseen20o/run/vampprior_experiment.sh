#!/usr/bin/env bash
# jmtomczak/vae_vampprior experiment.py (utils/load_data.py, utils/perform_experiment.py, utils/training.py,
# utils/evaluation.py, utils/optimizer.py, models/VAE.py, models/Model.py): argparse at module level, torch seeded
# (--seed 14; numpy NOT seeded); run(args, kwargs): a TIMESTAMPED folder snapshots/<datetime to the second>_<name>/ (exists
# test + makedirs); load_dataset in the sibling utils/load_data.py: freyfaces.pkl SHUFFLED with the unseeded
# np.random.shuffle, then sliced into train 1565 / val 200 / test 200 (a per-process random split), three loaders (train
# shuffled, val not, test shuffled); the model CLASS IMPORTED IN AN if/elif on --model_name (models.VAE.VAE here);
# VampPrior pseudo-inputs (a Linear 'means' with an idle eye input); AdamNormGrad (the repo's own Adam); the args
# appended to vae_experiment_log.txt; experiment_vae in the sibling perform_experiment.py: torch.save(args) as
# <name>.config, per epoch train_vae (training.py: model.calculate_loss(x, beta) - NOT forward -, one backward, step,
# loss.data[0] sums) and evaluate_vae on the val loader (calculate_loss, reconstruction PNGs via matplotlib after an
# exists test + makedirs of reconstruction/), EARLY STOPPING on the val loss with warmup (best -> torch.save(model): the
# WHOLE module), NaN break; then torch.load of the best whole module and a test evaluation (lower bound over the test
# data and the whole train loader, importance-sampled log-likelihood, histogram + sample PNGs), results appended to the
# log file and nine torch.save histories.
# Data: the repo's own datasets/Freyfaces/freyfaces.pkl (1965 28x20 gray faces; setup re-pickles it for Python 3): batch 100, 16 steps an epoch.
# Run: --dataset_name freyfaces --epochs 3 --warmup 1 --early_stopping_epochs 1 --number_components 50 --S 2 --MB 50
# --batch_size 100 --test_batch_size 100. CORPUS_ZERO_DIM_INDEX=1 (loss.data[0]), CORPUS_TORCH_LOAD_FULL=1 (torch.load
# of the whole module).
NAME=vampprior_experiment REPO=vae_vampprior SCRIPT=experiment.py
ARGS=(--dataset_name freyfaces --epochs 3 --warmup 1 --early_stopping_epochs 1 --number_components 50 --S 2 --MB 50 --batch_size 100 --test_batch_size 100)
export CORPUS_ZERO_DIM_INDEX=1 CORPUS_TORCH_LOAD_FULL=1
setup() {
  # the repo's freyfaces.pkl is a Python 2 pickle: re-written (in the scratch copy) as a Python 3 pickle of the same data
  "$PY" - <<'PY'
import pickle
with open("datasets/Freyfaces/freyfaces.pkl", "rb") as f:
    d = pickle.load(f, encoding="latin1")
with open("datasets/Freyfaces/freyfaces.pkl", "wb") as f:
    pickle.dump(d, f)
PY
}
SHOW_FILES="snapshots snapshots/* vae_experiment_log.txt"; CKPTS="snapshots/*/vae.model"
source "$(dirname "$0")/_common.sh"
