#!/usr/bin/env bash
# kamenbliznashki/generative_models infogan.py: argparse at import; output_dir makedirs after an isdir test; writer
# (utils.set_writer: log dir named from the wall-clock second); device cuda:{--cuda}; a fixed torch.manual_seed(11122018);
# three nets D (a shared body returning features + a Bernoulli distribution), Q (an AUXILIARY head on D's features:
# categorical + Gaussian distributions) and G; weights init by apply; g_optimizer over G, d_optimizer over D AND Q (two
# param groups); fetch_dataloader (MNIST, shuffle, drop_last); train_epoch(): fixed_z and the real / fake label tensors
# sized by args.batch_size, a G step (G(z) -> D -> Q, info loss; g_loss.backward leaves grads in D and Q), then a D step
# (D(x), D(generated.detach()) -> Q) with z = sample_z(args) also sized by args.batch_size; every log_interval steps
# add_scalar / add_image and save_image; utils.save_checkpoint of [D, Q, G] state dicts each epoch with --save_model;
# evaluate_on_grid(G) at the end (save_image twice).
# Run: MNIST stand-in SHIM_N 32, batch 8 (4 steps an epoch), 2 epochs, --save_model (--log_interval stays at its default 100: the flag has no type, a value given on the command line is a str and `i % args.log_interval` raises), so add_scalar / save_image at step 0 of each epoch.
NAME=infogan_train REPO=generative_models SCRIPT=infogan.py
ARGS=(--batch_size 8 --n_epochs 2 --save_model --data_dir ./data --output_dir ./results/tiny)
export SHIM_N=32
SHOW_FILES="results/tiny/*"; CKPTS="results/tiny/state_checkpoint.pt"
source "$(dirname "$0")/_common.sh"
