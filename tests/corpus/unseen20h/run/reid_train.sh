#!/usr/bin/env bash
# layumi/Person_reID_baseline_pytorch train.py: a module-level script; ImageFolder datasets and DataLoaders in DICTS by
# phase (image_datasets / dataloaders {'train', 'val'}, both shuffle=True, drop_last, num_workers=2 with
# persistent_workers); one next(iter(dataloaders['train'])) at import; the model picked by flags among ft_net* /
# PCB (model.py; ft_net wraps torchvision's resnet50 and a ClassBlock); SGD with two param groups (backbone 0.1 lr,
# classifier lr); StepLR; train_model(model, criterion, optimizer, scheduler, scaler, num_epochs) loops epochs x
# phases, with a warm-up over warm_iteration = round(dataset_sizes['train']/batchsize) * warm_epoch iterations,
# CircleLoss on the normalised features (--circle), per-phase running loss/acc over dataset_sizes, tqdm bars,
# draw_curve() saving a matplotlib figure every val phase, save_network() (utils.py) at every 10th epoch and 'last'
# (model.load_state_dict(last_model_wts) first); model/<name>/ gets copies of train.py/model.py and opts.yaml.
# Data: Market-like folders written by setup(): train 4 ids x 4 images, val 4 ids x 2 (64x32 arrays, resized to
# 256x128 by the transforms). 10 epochs (the script needs epoch 9 for last_model_wts), batch 4.
NAME=reid_train REPO=Person_reID_baseline_pytorch SCRIPT=train.py
ARGS=(--gpu_ids 0 --name tiny --data_dir data/pytorch --batchsize 4 --lr 0.05 --total_epoch 10 --warm_epoch 1
      --circle --linear_num 32 --droprate 0.5)
setup() {
  "$PY" - <<'PYEOF'
import os, numpy as np
rng = np.random.RandomState(0)
for split, n in (("train", 4), ("val", 2)):
    for pid in ("0002", "0007", "0010", "0011"):
        d = "data/pytorch/%s/%s" % (split, pid)
        os.makedirs(d, exist_ok=True)
        for i in range(n):
            with open("%s/%s_c1s1_%06d_00.jpg" % (d, pid, i), "wb") as f:
                np.save(f, rng.randint(0, 256, (64, 32, 3)).astype(np.uint8))
PYEOF
  mkdir -p model
}
SHOW_FILES="model/tiny/*"; CKPTS="model/tiny/net_010.pth model/tiny/net_last.pth"
source "$(dirname "$0")/_common.sh"
