#!/usr/bin/env bash
# boostcampaitech7/level1-imageclassification-cv-16 train.py (trainer.py, args.py, model/model_selection.py,
# model/cnn.py, util/{data,augmentation,optimizers,losses,schedulers,checkpoints}.py): __main__ seeds random / numpy /
# torch alike and calls run_train(args); run_train builds everything and hands it to the Trainer CLASS of the SIBLING
# module trainer.py, whose train() METHOD runs the loop on self.model; device = torch.device(args.device) (--device
# cuda asserts torch.cuda.is_available(), so the corpus run says cpu); pandas read_csv + sklearn train_test_split
# (stratified, random_state=42) into train / val frames; CustomDataset reads images with cv2 and applies an
# albumentations pipeline (flips / rotate draw from Python's random); BOTH DataLoaders shuffle=False; the model from a
# string REGISTRY (ModelSelector: cnn / torchvision / timm / resnet); optimizer and scheduler from factories
# (get_scheduler: StepLR stepped per BATCH in train_epoch, or ReduceLROnPlateau stepped per epoch with the val loss);
# wandb.init / watch / log / wandb.Image of misclassified val images; the checkpoint dir is ./checkpoints/<datetime.now()
# to the second> (os.makedirs exist_ok) with a config.txt; per epoch: early stopping counted on the VAL ACCURACY
# (`break`), a checkpoint whose FILE NAME carries val loss / acc when val acc >= best, and a last checkpoint at the end
# (model / optimizer / scheduler state dicts); the last --r_epochs epochs SWAP the loaders (train on the val loader,
# validate on the train loader); accuracies are divided by the frames' row counts (train_total / val_total).
# Data: setup() writes 24 random 40x40x3 images (numpy.save, read back by the cv2 stand-in) in 4 classes and
# data/train.csv (class_name,image_path,target): 20 train / 4 val rows after the split.
# Run: --device cpu --model cnn --num_classes 4 --height 224 --width 224 --batch 4 --epochs 3 --r_epochs 1
#      --early_stopping 2 --lr 0.001 --optim adam --lr_scheduler ReduceLROnPlateau --lr_scheduler_gamma 0.5 --verbose
NAME=lvl1_cls REPO=level1-imageclassification-cv-16 SCRIPT=train.py
ARGS=(--mode train --device cpu --data_root ./data --csv_path ./data/train.csv --model cnn --num_classes 4
      --height 224 --width 224 --batch 4 --epochs 3 --r_epochs 1 --early_stopping 2 --lr 0.001 --optim adam
      --lr_scheduler ReduceLROnPlateau --lr_scheduler_gamma 0.5 --verbose)
export CORPUS_PLATEAU_VERBOSE=1
SHOW_FILES="checkpoints checkpoints/*"; CKPTS="checkpoints/*/*.pth"
setup() {
  "$PY" - <<'PY'
import os, numpy as np
r = np.random.RandomState(11)
os.makedirs("data/train", exist_ok=True)
rows = ["class_name,image_path,target"]
for c in range(4):
    os.makedirs("data/train/c%d" % c, exist_ok=True)
    for i in range(6):
        p = "c%d/img%d.JPEG" % (c, i)
        with open(os.path.join("data/train", p), "wb") as f:
            np.save(f, r.randint(0, 256, size=(40, 40, 3)).astype(np.uint8))
        rows.append("c%d,%s,%d" % (c, p, c))
open("data/train.csv", "w").write("\n".join(rows) + "\n")
PY
}
source "$(dirname "$0")/_common.sh"
