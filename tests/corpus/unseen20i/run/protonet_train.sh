#!/usr/bin/env bash
# orobix/Prototypical-Networks-for-Few-shot-Learning-PyTorch src/train.py: main() makes experiment_root (exists ->
# makedirs), init_seed (np / torch seeds from --manual_seed), three loaders from init_dataloader: OmniglotDataset
# (src/omniglot_dataset.py; loads EVERY image at construction, classes = character x rotation from the split file)
# with DataLoader(dataset, batch_sampler=PrototypicalBatchSampler(...)) - a custom batch sampler (src/
# prototypical_batch_sampler.py) that yields `iterations` episodes per epoch, each classes_per_it random classes x
# (support + query) random samples of each, drawn with torch.randperm; ProtoNet (src/protonet.py); the loss
# prototypical_loss(model_output, target, n_support) (src/prototypical_loss.py) splits support/query BY CLASS INSIDE the
# episode; train() per epoch: episodes, lr_scheduler.step(), a validation pass, best_model.pth saved when avg val acc >=
# best (and best_state = model.state_dict(), a reference to the live tensors), last_model.pth at the end and four
# metric .txt lists; then test() (10 passes over the test loader) with the last model and again after
# model.load_state_dict(best_state). Data (setup): an Omniglot-layout folder (data/<alphabet>/<character>/*.png holding
# 28x28 .npy arrays that the PIL stand-in opens; splits/vinyals/{train,val,test}.txt). The PIL stand-in's __array__
# honours np.array(x, np.float32, copy=False) (load_img) by converting, where real PIL + numpy 2 would raise.
# 2 epochs x 4 episodes, 3 classes x (2 support + 2 query) per episode.
NAME=protonet_train REPO=Prototypical-Networks-for-Few-shot-Learning-PyTorch SUBDIR=src SCRIPT=train.py
ARGS=(--dataset_root ../dataset --experiment_root ../output --epochs 2 --iterations 4 --classes_per_it_tr 3
      --num_support_tr 2 --num_query_tr 2 --classes_per_it_val 3 --num_support_val 2 --num_query_val 2
      --manual_seed 7 --learning_rate 0.001)
setup() {
  "$PY" - <<'PYEOF'
import os
import numpy as np
rng = np.random.RandomState(0)
root = os.path.join("..", "dataset")
os.makedirs(os.path.join(root, "splits", "vinyals"), exist_ok=True)
splits = {"train": [("Alpha", c, r) for c in ("character01", "character02", "character03") for r in ("rot000", "rot090")],
          "val": [("Beta", c, "rot000") for c in ("character01", "character02", "character03")],
          "test": [("Gamma", c, "rot000") for c in ("character01", "character02", "character03")]}
for s, items in splits.items():
    with open(os.path.join(root, "splits", "vinyals", s + ".txt"), "w") as f:
        for a, c, r in items:
            f.write("%s/%s/%s\n" % (a, c, r))
    for a, c in sorted({(a, c) for a, c, r in items}):
        d = os.path.join(root, "data", a, c)
        os.makedirs(d, exist_ok=True)
        for j in range(6):
            with open(os.path.join(d, "%s_%02d.png" % (c, j)), "wb") as f:
                np.save(f, (rng.rand(28, 28) > 0.5).astype(np.uint8) * 255)
PYEOF
}
SHOW_FILES="../output/*"; CKPTS="../output/best_model.pth ../output/last_model.pth"
source "$(dirname "$0")/_common.sh"
