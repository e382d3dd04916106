#!/usr/bin/env bash
# simonwu53/MIR_sample_cnn main.py (train.py, src/models/{__init__,misc,sample_cnn}.py, src/data/{dataset,prefetcher}.py,
# src/utils/{config,func}.py): main.py only parses arguments and DISPATCHES by --mode to train_on_model(args) in the
# SIBLING module train.py (the whole training - device, model, loaders, optimizer, schedulers, loop, saves - lives
# there); src/utils/config.py at IMPORT seeds random / torch alike (reset_all_seeds(53)), makes <repo>/logs after an
# exists test, and sets up a rich console logger (LOG / CONSOLE, stdout); device = torch.device(args.device)
# ('cuda:0' default; 'cpu' raises NotImplementedError) + torch.cuda.set_device; build_model(args) picks SampleCNN /
# ExpSampleCNN by if/elif; output dir p_out = <p_out>/<model.name>-<exp> made after an exists test; train and VAL
# loaders both shuffle=True, drop_last=True; every pass goes through DataPrefetcher (a CUDA-stream prefetcher built per
# epoch around the loader; .next() returns (None, None) at the end); steps = dataset.calc_steps(bs) (len // bs);
# a project-own ReduceLROnPlateau(val_loss) and EarlyStopping(val_loss) (break when early_stop); a checkpoint
# ckpt@epoch-NNN-loss-<val>.tar when the LR changed, best@epoch-NNN-loss-<val>.tar on a new best val loss, else
# latest.tar - the FILE NAMES carry this process's val loss; --load_optimal_on_plateau: after an LR change the best
# file is found by globbing p_out and parsing the val losses out of the names, then RELOADED (model + optimizer) and
# the tensorboard writer reopened with purge_step; SummaryWriter under <repo>/logs/tensorboard/...
# (--n / --samples_in are left at their defaults 9 / 59049: torchrun rejects a script argument `--n` as an ambiguous
# abbreviation of its own options.) Data: setup() writes 24 train / 12 val .npz clips (data: 59049 float samples, labels: 10 multi-hot) in
# dataset/processed/{train,val}. torch.load of the checkpoints needs weights_only=False (they hold a PosixPath):
# CORPUS_TORCH_LOAD_FULL=1 (as torch < 2.6 loaded).
# Run: --mode train --device cuda:0 --model samplecnn --module_filters 8 8 8 16 16 16 16 16 16 32 32
#      --n_class 10 --batch_size 4 --lr 0.5 --max_epoch 5 --plateau_patience 0 --early_stop_patience 2 --load_optimal_on_plateau
#      --n_workers 0 --tensorboard_interval 2 --tensorboard_exp_name corpus --p_out ./out
NAME=mir_samplecnn REPO=MIR_sample_cnn SCRIPT=main.py
ARGS=(--mode train --device cuda:0 --model samplecnn --module_filters 8 8 8 16 16 16 16 16 16 32 32
      --n_class 10 --batch_size 4 --lr 0.5 --max_epoch 5 --plateau_patience 0 --early_stop_patience 2 --load_optimal_on_plateau
      --n_workers 0 --tensorboard_interval 2 --tensorboard_exp_name corpus --p_out ./out)
EXTRA_SHIM=/work/corpus-unseen20r/_deps
export CORPUS_CUDA_STREAM=1 CORPUS_CUDA_DEVICE_AS_CPU=1 CORPUS_TORCH_LOAD_FULL=1
SHOW_FILES="out out/*"; CKPTS="out/*/latest.tar"
setup() {
  "$PY" - <<'PY'
import os, numpy as np
r = np.random.RandomState(7)
for split, n in (("train", 24), ("val", 12)):
    d = "dataset/processed/%s" % split; os.makedirs(d, exist_ok=True)
    for i in range(n):
        np.savez(os.path.join(d, "clip-%d-seg-1-of-1.npz" % i), data=r.randn(59049).astype(np.float32) * 0.1,
                 labels=(r.rand(10) < 0.3).astype(np.int64))
PY
}
source "$(dirname "$0")/_common.sh"
