#!/usr/bin/env bash
# kaituoxu/Conv-TasNet src/train.py: main(args) builds AudioDataset train/cv sets (src/data.py; each ITEM is a whole
# minibatch made at construction from the json lists sorted by length, cut into `segment`-long pieces) and
# AudioDataLoader(batch_size=1, shuffle=args.shuffle) with its own collate_fn (padding); the loaders go into a DICT
# data = {'tr_loader': ..., 'cv_loader': ...}; ConvTasNet (src/conv_tasnet.py) in nn.DataParallel + .cuda() when
# use_cuda; Adam; a Solver (src/solver.py, a plain class) runs the epochs: _run_one_epoch for train and cross-validation
# (PIT loss cal_loss from pit_criterion.py), clip_grad_norm_, a checkpoint per epoch and a best-validation model saved
# via self.model.module.serialize(self.model.module, optimizer, ...) (model hyper-parameters + state_dict + optim_dict +
# tr_loss/cv_loss tensors), os.makedirs(save_folder, exist_ok=True), lr halving by optimizer state_dict round-trip
# after 3 epochs without improvement and early stopping after 10 (half_lr / early_stop), resume (continue_from) through
# self.model.module.load_state_dict. The run uses --use_cuda 1 (the configuration the script is written for; without it
# self.model.module fails): DataParallel on CPU just calls the module and .cuda() is a no-op (CORPUS_FAKE_CUDA). Data
# (setup): tr 8 and cv 4 two-speaker mixtures as .npy "wav" files (400-1200 samples at sample_rate 800) read by the
# librosa stand-in, json lists per dir. Segment 0.5 s, batch 2 segments, 3 epochs, a tiny net.
NAME=tasnet_train REPO=Conv-TasNet SUBDIR=src SCRIPT=train.py
ARGS=(--train_dir ../tiny/tr --valid_dir ../tiny/cv --sample_rate 800 --segment 0.5 --cv_maxlen 2 --N 16 --L 8 --B 8
      --H 16 --P 3 --X 2 --R 1 --C 2 --norm_type gLN --causal 0 --mask_nonlinear relu --use_cuda 1 --epochs 3
      --half_lr 1 --early_stop 1 --max_norm 5 --shuffle 1 --batch_size 2 --num_workers 0 --optimizer adam --lr 1e-3
      --save_folder ../exp/tiny --checkpoint 1 --print_freq 2 --model_path final.pth.tar)
setup() {
  "$PY" - <<'PYEOF'
import json, os
import numpy as np
rng = np.random.RandomState(0)
for split, n in (("tr", 8), ("cv", 4)):
    infos = {"mix": [], "s1": [], "s2": []}
    for k in ("mix", "s1", "s2"):
        os.makedirs(os.path.join("..", "tiny", split, k), exist_ok=True)
    for j in range(n):
        L = int(rng.randint(400, 1200))
        s1, s2 = rng.randn(L) * 0.3, np.sin(np.arange(L) * (0.05 + 0.01 * j)) * 0.5
        for k, a in (("s1", s1), ("s2", s2), ("mix", s1 + s2)):
            p = os.path.abspath(os.path.join("..", "tiny", split, k, "utt%02d.wav" % j))
            with open(p, "wb") as f:
                np.save(f, a.astype(np.float32))
            infos[k].append([p, L])
    for k, v in infos.items():
        json.dump(v, open(os.path.join("..", "tiny", split, k + ".json"), "w"))
PYEOF
}
SHOW_FILES="../exp/tiny/*"; CKPTS="../exp/tiny/final.pth.tar ../exp/tiny/epoch3.pth.tar"
source "$(dirname "$0")/_common.sh"
