#!/usr/bin/env bash
# facebookresearch/DomainBed domainbed/scripts/train.py: a module-level script; the algorithm class is chosen by name
# (algorithms.get_algorithm_class(args.algorithm) -> globals()[name]) from a sibling module; DANN (AbstractDANN) is an
# nn.Module holding featurizer, classifier, discriminator and class_embeddings AND its two Adam optimizers, and its
# training step is a method (update(minibatches)): alternating discriminator / generator steps by an update_count buffer,
# a gradient penalty by autograd.grad(create_graph=True) on the discriminator input; the script never calls the module's
# forward (predict() for the evaluation). Loaders: one InfiniteDataLoader per training environment (RandomSampler with
# replacement inside an infinite BatchSampler, drawn from the global torch RNG seeded with args.seed), zipped; FastDataLoader
# for every split's accuracy at checkpoints; sys.stdout/stderr replaced by misc.Tee appending to output_dir/out.txt;
# results.jsonl appended, model.pkl and model_step*.pkl saved (algorithm.state_dict()), a 'done' file. Data: Debug28 (three
# environments of 16 random 3x28x28 tensors made from the seeded torch RNG, part of the repo); 6 steps, a checkpoint every
# 3 steps (steps 0, 3, 5), batch 4 per environment (two training environments), grad_penalty 0.1, saves at every checkpoint.
NAME=domainbed_dann REPO=DomainBed SCRIPT=domainbed/scripts/train.py
ARGS=(--dataset Debug28 --algorithm DANN --test_envs 0 --steps 6 --checkpoint_freq 3 --output_dir train_output
      --hparams '{"batch_size": 4, "grad_penalty": 0.1}' --save_model_every_checkpoint --seed 0)
SHOW_FILES="train_output/*"; CKPTS="train_output/*.pkl"
source "$(dirname "$0")/_common.sh"
