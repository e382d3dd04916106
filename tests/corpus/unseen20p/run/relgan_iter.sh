#!/usr/bin/env bash
# AlexiaJM/RelativisticGAN code/GAN_losses_iter.py (fid.py, pytorch_visualize.py): a module-level script; argparse with
# a 'bool' type; a run folder <output_folder>/<title>-<j> found by probing os.path.exists for j = 0, 1, ... then os.mkdir
# (+ logs/, images/), extra_folder os.mkdir after an exists test; log.txt opened 'w'; the seed, when --seed is not given,
# is random.randint(1, 10000) (UNSEEDED: per process) and seeds random / numpy / torch; NO DataLoader: an ImageFolder
# dataset read by an INFINITE GENERATOR that draws param.batch_size indices with numpy.random.choice (replace=False) and
# stacks them; G and D (DCGAN_G / DCGAN_D classes defined inside an if/elif on --arch, 0 here); weights_init; batch-sized
# buffers x, x_fake, y, y2, z, u, grad_outputs (torch.FloatTensor(param.batch_size, ...)) and a fixed z_test; two Adams and
# two ExponentialLR; --load resume; the loop over n_iter: a G(z_test) sample PNG every print_every into base_dir/images;
# D step(s): D(x) on a real batch, G(z), D(x_fake.detach()), the relativistic loss (--loss_D 6: RaSGAN) - TWO D forwards
# before one backward; D's params requires_grad toggled off for the G step; G step: G(z), D(fake), D(x) (another real
# forward for the relativistic loss); every gen_every: a state dict checkpoint (G, D, optimizers, schedulers, z_test)
# to extra_folder/models/state_NN.pth after an exists test + os.mkdir, and gen_extra_images PNGs (100 a batch) into
# extra_folder/<set>/ (unlink of existing files or os.mkdir).
# Data: ImageFolder stand-in (no class folders: SHIM_N=64 random images). fid.py's tensorflow / scipy.misc.imread,
# graphviz, IPython.display: import-only stand-ins.
# Run: --image_size 32 --batch_size 8 --z_size 16 --G_h_size 8 --D_h_size 8 --n_iter 6 --print_every 3 --gen_every 3
# --gen_extra_images 100 --loss_D 6 --input_folder data/cats --output_folder out --extra_folder extra (no --seed).
NAME=relgan_iter REPO=RelativisticGAN SUBDIR=code SCRIPT=GAN_losses_iter.py
ARGS=(--image_size 32 --batch_size 8 --z_size 16 --G_h_size 8 --D_h_size 8 --n_iter 6 --print_every 3 --gen_every 3 --gen_extra_images 100 --loss_D 6 --input_folder data/cats --output_folder out --extra_folder extra)
export SHIM_N=64
SHOW_FILES="out out/* out/*/images extra extra/models"; CKPTS="extra/models/state_02.pth"
setup() { mkdir -p out; }
source "$(dirname "$0")/_common.sh"
