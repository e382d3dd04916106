#!/usr/bin/env bash
# huangzh13/StyleGAN.pytorch train.py: a module-level __main__ block; the yacs config (config.py defaults merged with
# a YAML the run script writes, --config) is frozen; output_dir must NOT exist (raise KeyError) and is made with
# os.makedirs, the source tree is copied into it (copy_files_and_create_dirs) and a FileHandler log (make_logger) set;
# the dataset is made by make_dataset (data/__init__.py: FlatDirectoryImageDataset); StyleGAN (models/GAN.py, a plain
# class, not an nn.Module) builds Generator + Discriminator, their two Adams, the loss object by name (Losses.py,
# logistic: R1 penalty by autograd.grad inside dis_loss) and gen_shadow = deepcopy(gen) as EMA; StyleGAN.train() makes
# a NEW DataLoader per depth (get_data_loader with batch_sizes[depth], shuffle, drop_last), fades in by ticker /
# fade_point computed from len(data), draws gan_input sized by the batch, calls optimize_discriminator /
# optimize_generator (clip_grad_norm_ on gen, ema update), writes sample grids (create_grid -> save_image) from
# gen_shadow and saves gen / dis / both optimizers / gen_shadow state dicts at each depth's epochs. Data: 8 random
# 8x8 images (.npy named .jpg) in a flat folder; resolution 8 (depths 4x4 and 8x8), 1 epoch per depth, batch 4,
# latent 32, 4 fixed samples.
NAME=stylegan_train REPO=StyleGAN.pytorch SCRIPT=train.py
ARGS=(--config ./configs/tiny.yaml)
export CORPUS_ADAM_INT_BETAS=1
setup() {
  "$PY" - <<'PYEOF'
import os, numpy as np
rng = np.random.RandomState(0)
os.makedirs("data/flat", exist_ok=True)
for i in range(8):
    with open("data/flat/%03d.jpg" % i, "wb") as f:
        np.save(f, rng.randint(0, 256, (8, 8, 3)).astype(np.uint8))
PYEOF
  cat > configs/tiny.yaml <<'YEOF'
output_dir: './out/tiny'
device: 'cpu'
structure: 'linear'
loss: 'logistic'
num_works: 0
num_samples: 4
feedback_factor: 1
checkpoint_factor: 1
dataset:
  img_dir: './data/flat'
  folder: False
  resolution: 8
  channels: 3
model:
  gen:
    latent_size: 32
    mapping_layers: 2
sched:
  epochs: [1, 1]
  batch_sizes: [4, 4]
  fade_in_percentage: [50, 50]
YEOF
}
SHOW_FILES="out/tiny/* out/tiny/samples/* out/tiny/models/*"; CKPTS="out/tiny/models/GAN_GEN_1_1.pth out/tiny/models/GAN_DIS_1_1.pth"
source "$(dirname "$0")/_common.sh"
