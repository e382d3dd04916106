#!/usr/bin/env bash
# leftthomas/SRGAN train.py: argparse at import, everything else under __main__ (module-level loop); train / val
# datasets from folders (data_utils.py: RandomCrop -> LR by Resize), train loader batch 64 HARD-CODED (shuffle,
# num_workers 4), val loader batch 1; netG / netD, GeneratorLoss (loss.py: a frozen VGG16 feature network in eval
# mode, MSE, TV); .cuda() of the three when CUDA; two Adam optimizers; per step: G step (netG(z) -> netD -> loss with
# the VGG net, backward, optimizerG.step), D step (netD(real), netD(fake.detach()), backward) and then ANOTHER
# netG(z) / netD(fake) forward with no backward before optimizerD.step (the logged g_score); running sums weighted by
# the batch size; per epoch: a whole-val-set PSNR / SSIM (pytorch_ssim), display images stacked and written with
# save_image into training_results/SRF_4/ (makedirs after an exists test), torch.save of netG / netD state dicts into
# epochs/ each epoch; a pandas CSV every 10 epochs (not reached).
# Data (setup): data/DIV2K_train_HR 80 images 32x32x3 and data/DIV2K_valid_HR 5 images 32x32x3 (.npy arrays under
# .png names, read by the PIL stand-in); 80 train rows = 2 steps (64 + 16) an epoch.
# Shims: ToPILImage / Resize / RandomCrop act on the PIL stand-in as torchvision's do; vgg16 narrowed (run/shim).
# Run: --crop_size 32 --upscale_factor 4 --num_epochs 2.
NAME=srgan_train REPO=SRGAN SCRIPT=train.py
ARGS=(--crop_size 32 --upscale_factor 4 --num_epochs 2)
setup() {
  "$PY" - <<'PYEOF'
import os
import numpy as np
rng = np.random.RandomState(0)
for d, n, s in (("data/DIV2K_train_HR", 80, 32), ("data/DIV2K_valid_HR", 5, 32)):
    os.makedirs(d, exist_ok=True)
    for i in range(n):
        np.save(open(os.path.join(d, "%03d.png" % i), "wb"), rng.randint(0, 256, size=(s, s, 3)).astype(np.uint8))
PYEOF
}
SHOW_FILES="epochs/* training_results/SRF_4/*"; CKPTS="epochs/netG_epoch_4_2.pth epochs/netD_epoch_4_2.pth"
source "$(dirname "$0")/_common.sh"
