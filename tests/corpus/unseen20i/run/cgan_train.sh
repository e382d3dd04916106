#!/usr/bin/env bash
# gordicaleksa/pytorch-GANs train_cgan.py: the __main__ block makes data/debug_imagery; utils/constants.py makes
# models/binaries, models/checkpoints and data AT IMPORT; train_cgan(training_config) opens a tensorboard SummaryWriter
# (./runs), the MNIST loader from utils/utils.py (get_mnist_data_loader: shuffle, drop_last), the two nets picked by
# name (utils.get_gan(device, GANType.CGAN.name): ConditionalDiscriminatorNet / ConditionalGeneratorNet from
# models/definitions/conditional_gan.py) and their two Adams (utils.get_optimizers); real/fake targets
# torch.ones/zeros((batch_size, 1)) made ONCE from the configured batch size; a fixed reference noise batch of 100;
# per batch a D step (real + detached fake, one backward) then a G step (generator through the discriminator, whose
# gradients are left in D's .grad), labels one-hot; every debug_imagery_log_freq batches generator_net(ref_noise) grids to
# tensorboard and save_image into data/debug_imagery/<6-digit count>.jpg; every checkpoint_freq epochs (batch 0) a
# checkpoint utils.get_training_state(generator_net, ...) = {commit_hash (GitPython), state_dict, gan_type} into
# models/checkpoints; at the end the generator into models/binaries under utils.get_available_binary_name (the next
# free CGAN_<6 digits>.pth after listing the folder). No seed. Data: MNIST stand-in (32 images). 2 epochs, batch 4.
NAME=cgan_train REPO=pytorch-GANs SCRIPT=train_cgan.py
ARGS=(--num_epochs 2 --batch_size 4 --debug_imagery_log_freq 3 --console_log_freq 2 --checkpoint_freq 1)
export SHIM_N=32
SHOW_FILES="models/binaries/* models/checkpoints/* data/debug_imagery/*"
CKPTS="models/binaries/CGAN_000000.pth models/checkpoints/cgan_ckpt_epoch_2_batch_1.pth"
source "$(dirname "$0")/_common.sh"
