#!/usr/bin/env bash
# facebookresearch/GradientEpisodicMemory main.py (model ewc): a module-level script; the learner is picked by name
# (importlib.import_module('model.' + args.model)) and is an nn.Module (model/ewc.py Net) that holds the MLP (self.net)
# AND its SGD optimizer (self.opt); the training step is the method observe(x, t, y), which calls self(x, t) (forward ->
# self.net) and, at each task change, a Fisher backward over its memory (memx/memy, the first n_memories rows of the
# task) stored as fisher/optpar; the EWC penalty sums reg * fisher * (p - optpar)^2 over earlier tasks. Data: no
# DataLoader - the Continuum class of main.py is a hand-written iterator over (task, row) pairs (torch.randperm per
# task, random.shuffle of the order, batches of batch_size within a task); eval_tasks() runs the whole test set of every
# task every log_every batches; results (confusion_matrix text via metrics/metrics.py, and a torch.save of results +
# model.state_dict()) go to save_path with a uuid4 name. Data: 3 tasks x 24 train / 8 test rows of 20 features written
# by setup() as the repo's format ([rotation, x, y] per task); 1 epoch, batch 4, n_memories 8.
NAME=gem_ewc REPO=GradientEpisodicMemory SCRIPT=main.py
ARGS=(--model ewc --n_hiddens 16 --n_layers 2 --n_memories 8 --memory_strength 1 --n_epochs 1 --batch_size 4
      --lr 0.1 --cuda no --seed 0 --log_every 3 --save_path results/ --data_path data/ --data_file tiny.pt)
setup() {
  "$PY" - <<'PYEOF'
import os, torch
os.makedirs("data", exist_ok=True)
g = torch.Generator().manual_seed(0)
def task(n, k):
    x = torch.rand(n, 20, generator=g)
    y = torch.randint(0, 5, (n,), generator=g)
    return [k, x, y]
torch.save(([task(24, k) for k in range(3)], [task(8, k) for k in range(3)]), "data/tiny.pt")
PYEOF
}
SHOW_FILES="results/*"; CKPTS="results/*.pt"
source "$(dirname "$0")/_common.sh"
