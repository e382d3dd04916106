#!/usr/bin/env bash
# VainF/DeepLabV3Plus-Pytorch main.py: main() sets os.environ['CUDA_VISIBLE_DEVICES'] = opts.gpu_id, picks the model by
# name from a registry (network.modeling.__dict__[opts.model]: deeplabv3plus_mobilenet, whose backbone loads ImageNet
# weights through torch.hub.load_state_dict_from_url - served from TORCH_HOME, written by setup()), wraps it in
# nn.DataParallel, SGD with two param groups (backbone 0.1 lr), PolyLR stepped every iteration; an iteration-counted
# while True loop over epochs that returns from main() once cur_itrs >= total_itrs; every val_interval iterations
# save_ckpt (a closure saving model.module.state_dict(), optimizer, scheduler, best_score) writes latest_*.pth, then
# validate() (val loader shuffle=True, StreamSegMetrics, result images written with Image.save and plt.savefig into
# results/ after exists-then-os.mkdir) and best_*.pth when the Mean IoU improves; checkpoints/ made by utils.mkdir
# (exists-then-os.mkdir). Data: VOC2012 layout written by setup(): 8 train / 4 val random 40x48 images and masks (.npy
# named .jpg/.png, opened by the PIL stand-in); ext_transforms run on the stand-in (real nearest resize, pad, crop, flip).
# 6 iterations, batch 4, crop 32, validation (and checkpoints) at iterations 3 and 6, --save_val_results.
NAME=deeplab_main REPO=DeepLabV3Plus-Pytorch SCRIPT=main.py
ARGS=(--data_root ./datasets/data --dataset voc --year 2012 --model deeplabv3plus_mobilenet --output_stride 16
      --crop_size 32 --batch_size 4 --val_batch_size 4 --total_itrs 6 --val_interval 3 --lr 0.01 --gpu_id 0
      --random_seed 1 --save_val_results)
setup() {
  export TORCH_HOME="$PWD/torch_home"
  "$PY" - <<'PYEOF'
import os, numpy as np, torch
from network.backbone.mobilenetv2 import MobileNetV2
torch.manual_seed(0)
os.makedirs("torch_home/hub/checkpoints", exist_ok=True)
torch.save(MobileNetV2().state_dict(), "torch_home/hub/checkpoints/mobilenet_v2-b0353104.pth")
rng = np.random.RandomState(0)
root = "datasets/data/VOCdevkit/VOC2012"
for d in ("JPEGImages", "SegmentationClass", "ImageSets/Segmentation"):
    os.makedirs(os.path.join(root, d), exist_ok=True)
for split, n, off in (("train", 8, 0), ("val", 4, 100)):
    ids = ["2007_%06d" % (off + i) for i in range(n)]
    with open(os.path.join(root, "ImageSets/Segmentation", split + ".txt"), "w") as f:
        f.write("\n".join(ids) + "\n")
    for i in ids:
        with open(os.path.join(root, "JPEGImages", i + ".jpg"), "wb") as f:
            np.save(f, rng.randint(0, 256, (40, 48, 3)).astype(np.uint8))
        m = rng.randint(0, 21, (40, 48)).astype(np.uint8); m[:2] = 255
        with open(os.path.join(root, "SegmentationClass", i + ".png"), "wb") as f:
            np.save(f, m)
PYEOF
}
SHOW_FILES="checkpoints/* results/*"; CKPTS="checkpoints/*.pth"
source "$(dirname "$0")/_common.sh"
