#!/usr/bin/env bash
# clovaai/deep-text-recognition-benchmark train.py (dataset.py, model.py, modules/, test.py, utils.py): argparse under
# __main__; saved_models/<exp_name> made (exist_ok); random / numpy / torch seeded with --manualSeed 1111; with several
# GPUs batch_size *= num_gpu; train(opt): Batch_Balanced_Dataset (dataset.py: a CLASS holding one DataLoader per
# selected dataset (MJ, ST; shuffle) with batch_size round(batch_size * ratio) each, their iterators kept and restarted
# on StopIteration inside get_batch(): an endless stream that concatenates one batch of each; it REWRITES
# opt.batch_size to the total; it appends to log_dataset.txt); the valid loader (shuffle=True); Model (None-VGG-BiLSTM-CTC
# here) initialised with kaiming_normal_; nn.DataParallel(model).to(device); Adadelta over the requires_grad
# parameters; opt.txt appended; an endless `while True` loop: get_batch(), CTC loss (preds_size sized from the batch),
# backward, clip_grad_norm_, step; at iteration 0 and every valInterval: validation(model, ...) over the whole valid
# loader (test.py), best_accuracy.pth / best_norm_ED.pth saved on better numbers (state dict of the DataParallel model:
# 'module.' keys), log_train.txt appended; sys.exit() at num_iter.
# Data: LMDB stand-ins written by setup (run/shim/lmdb.py reads data.pkl): training/MJ 24 and training/ST 24 samples,
# validation 12; grey 32x100 images (.npy bytes, read by the PIL stand-in), lowercase labels of 3-8 characters.
# CORPUS_TORCH_ACCUMULATE=1 restores torch._utils._accumulate (gone from torch 2.x; dataset.py imports it).
# Run: --select_data MJ-ST --batch_ratio 0.5-0.5 --batch_size 8 --num_iter 6 --valInterval 3 --workers 0,
#      --Transformation None --FeatureExtraction VGG --SequenceModeling BiLSTM --Prediction CTC --output_channel 32
#      --hidden_size 32.
NAME=textrec_train REPO=deep-text-recognition-benchmark SCRIPT=train.py
ARGS=(--exp_name tiny --train_data data_lmdb/training --valid_data data_lmdb/validation --select_data MJ-ST
      --batch_ratio 0.5-0.5 --batch_size 8 --num_iter 6 --valInterval 3 --workers 0 --Transformation None
      --FeatureExtraction VGG --SequenceModeling BiLSTM --Prediction CTC --output_channel 32 --hidden_size 32)
export CORPUS_TORCH_ACCUMULATE=1
setup() {
  "$PY" - <<'PYEOF'
import io, os, pickle
import numpy as np
rng = np.random.RandomState(0)
for sub, n in (("training/MJ", 24), ("training/ST", 24), ("validation", 12)):
    d = {b"num-samples": str(n).encode()}
    for i in range(1, n + 1):
        buf = io.BytesIO()
        np.save(buf, rng.randint(0, 256, size=(32, 100)).astype(np.uint8))
        d[b"image-%09d" % i] = buf.getvalue()
        d[b"label-%09d" % i] = "".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz0123456789"), rng.randint(3, 9))).encode()
    os.makedirs(os.path.join("data_lmdb", sub), exist_ok=True)
    with open(os.path.join("data_lmdb", sub, "data.pkl"), "wb") as f:
        pickle.dump(d, f)
PYEOF
}
SHOW_FILES="saved_models/tiny/*"; CKPTS="saved_models/tiny/best_accuracy.pth"
AFTER='wc -l saved_models/tiny/*.txt'
source "$(dirname "$0")/_common.sh"
