#!/usr/bin/env bash
# NVlabs/MUNIT train.py: a module-level script; the trainer is chosen by name (--trainer MUNIT|UNIT if-chain) from a
# sibling module: MUNIT_Trainer is an nn.Module holding gen_a, gen_b (AdaINGen), dis_a, dis_b (MsImageDis), their two
# Adam optimizers and StepLR schedulers; the training steps are its methods dis_update / gen_update, which call the
# networks' encode / decode / calc_dis_loss / calc_gen_loss methods (never their forward) and size the style codes by
# x.size(0); .cuda() everywhere (also on the style noise made in __init__); two train loaders (MUNIT's own ImageFolder,
# shuffle, drop_last) zipped in a `while True` loop that ends with sys.exit('Finish training') at max_iter (exit status 1
# by design); torch.cuda.synchronize() every step; display images stacked from dataset[i] once; prepare_sub_folder
# (exists-then-os.makedirs) and shutil.copy of the config; tensorboardX writer (stand-in) fed by write_loss (every
# trainer attribute named *loss*); write_2images (torchvision save_image stand-in writes) and write_html every
# image_save_iter; trainer.save (gen/dis/optimizer .pt) every snapshot_save_iter; --resume reloads the last one.
# Config written by setup() (the edges2shoes_folder layout, narrowed: gen dim 8, 1 res block, dis 2 layers x 2 scales,
# vgg_w 0, 32x32 crops, batch 2, max_iter 4, images and snapshots every 2 iterations, StepLR step 2); data: 6 train / 2 test
# random 32x32 images per domain (.npy named .jpg). torch.utils.serialization (removed in torch 1.0, imported by utils.py
# for load_lua) is an import-only stand-in (CORPUS_TORCH_SERIALIZATION); torch.cuda.synchronize is a no-op without CUDA.
NAME=munit_train REPO=MUNIT SCRIPT=train.py
ARGS=(--config configs/corpus.yaml --output_path . --trainer MUNIT)
export CORPUS_OLD_YAML=1 CORPUS_TORCH_SERIALIZATION=1
setup() {
  cat > configs/corpus.yaml <<'YAML'
image_save_iter: 2
image_display_iter: 100
display_size: 2
snapshot_save_iter: 2
log_iter: 1
max_iter: 4
batch_size: 2
weight_decay: 0.0001
beta1: 0.5
beta2: 0.999
init: kaiming
lr: 0.0001
lr_policy: step
step_size: 2
gamma: 0.5
gan_w: 1
recon_x_w: 10
recon_s_w: 1
recon_c_w: 1
recon_x_cyc_w: 0
vgg_w: 0
gen:
  dim: 8
  mlp_dim: 16
  style_dim: 4
  activ: relu
  n_downsample: 2
  n_res: 1
  pad_type: reflect
dis:
  dim: 8
  norm: none
  activ: lrelu
  n_layer: 2
  gan_type: lsgan
  num_scales: 2
  pad_type: reflect
input_dim_a: 3
input_dim_b: 3
num_workers: 0
new_size: 32
crop_image_height: 32
crop_image_width: 32
data_root: ./datasets/corpus/
YAML
  "$PY" - <<'PYEOF'
import os, numpy as np
rng = np.random.RandomState(0)
for split, n in (("trainA", 6), ("trainB", 6), ("testA", 2), ("testB", 2)):
    d = "datasets/corpus/" + split
    os.makedirs(d, exist_ok=True)
    for i in range(n):
        with open("%s/%d.jpg" % (d, i), "wb") as f:
            np.save(f, rng.randint(0, 256, (32, 32, 3)).astype(np.uint8))
PYEOF
}
SHOW_FILES="outputs/corpus/* outputs/corpus/images/* outputs/corpus/checkpoints/*"; CKPTS="outputs/corpus/checkpoints/*.pt"
source "$(dirname "$0")/_common.sh"
